"""Talking to a working agent from chat: how long a steer and an approval take, end to end.

The real bot process (`python -m chatbot run`) over the real Prosody (started here unless
--servers names a running `scripts/servers` description), its builder the real codex or
claude (--cli; both by default, one after the other) against the scripted loopback
provider in this process (tests/integration/talk_bot.py), the owner a real XMPP client in
the bot's room.

The agent's CLI is started through a relay (a few lines of Python between the bot and
the CLI, in the run's process group) that notes, on the wall clock every process here
shares, when a steer and an approval's answer reach the CLI's stdin and when the CLI
asks for an approval on its stdout. So each figure splits into the bot's share and the
CLI's:

- steer (--steers, default 50): the model runs `sleep --command-s; date` (the agent is
  idle between tool calls, waiting for its command); --lead seconds after the provider
  handed that command out, the owner sends `/steer <slug> <text>`. Measured from the
  message leaving the owner's client to
  - the bot handing the text to the CLI (the relay reads it): the bot's share, the
    figure the issue's target (p99 under 100 ms) is about;
  - the provider receiving the request that carries it: the whole way. A steer reaches
    the model at the agent's next request, after its command ended, so this includes
    the rest of the command; the CLI's share is reported as the provider's receipt less
    the later of the command's end (the `date` it printed) and the relay's receipt.
- approval (--approvals, default 20): the model asks for a command outside the role's
  grants (claude: any python3; codex: an escalation out of its sandbox); the owner's
  client reacts 👍 as soon as the request shows in the room. From the CLI writing the
  request (relay) to the bot's answer reaching the CLI (relay): the round trip, split
  into the bot posting it to the room (until the owner's client has it) and the 👍 on
  its way back (from the owner's client to the CLI). Then the CLI's share: the answer
  reaching the CLI to the provider receiving the command's output.

The bot's token bucket for commands is made large (`unthrottled_bot`), as in
bench/latency.py: 50 steers in a minute are more than it lets one owner send.

Prints p50 / p99 / max in milliseconds; asserts nothing.

    .venv/bin/python bench/talk.py [--cli codex claude] [--steers 50] [--approvals 20]
        [--command-s 1.0] [--lead 0.3] [--servers path/to/servers.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runners.runtimes import RUNTIMES  # noqa: E402
from runners.versions import TESTED  # noqa: E402
from tests.integration.e2e import Room, stanza_id  # noqa: E402
from tests.integration.talk_bot import Agents, approval_asked, finish, start  # noqa: E402
from tests.integration.xmpp_peer import XmppPeer  # noqa: E402
from tests.realcli import install  # noqa: E402
from tests.realcli.clis import CLIS  # noqa: E402
from tests.realcli.openai_responses import Escalate  # noqa: E402
from tests.realcli.providers import ScriptedModel, Seen, Shell, WriteFile  # noqa: E402
from tests.realservers import given_or_started  # noqa: E402

#: Rounds per card: claude counts each model request as a turn (at most 40 a run).
PER_CARD = 25

# The relay the bot starts instead of the CLI. Lines pass through unchanged; the ones
# that matter are noted with the time they passed.
RELAY = """#!{python}
import json, subprocess, sys, threading, time
child = subprocess.Popen([{binary!r}, *sys.argv[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
log = open({log!r}, "a", buffering=1)
def note(way, line):
    text = line.decode(errors="replace")
    log.write(json.dumps({{"t": time.time(), "way": way, "line": text}}) + "\\n")
def down():
    for line in iter(sys.stdin.buffer.readline, b""):
        if any(m.encode() in line for m in {stdin_marks!r}):
            note("in", line)
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
threading.Thread(target=down, daemon=True).start()
for line in iter(child.stdout.readline, b""):
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
    if any(m.encode() in line for m in {stdout_marks!r}):
        note("out", line)
sys.exit(child.wait())
"""

#: What marks an approval request on the CLI's stdout, and its answer on its stdin.
ASKS = {"codex": "requestApproval", "claude": "can_use_tool"}
ANSWERS = {"codex": '"result": {"decision"', "claude": '"control_response"'}
STEER = "bench-steer-"


def relay(folder: Path, cli: str) -> tuple[Path, Path]:
    """The relay's program and the file it notes times in."""
    log = folder / f"relay-{cli}.jsonl"
    program = folder / f"relay-{cli}"
    program.write_text(
        RELAY.format(
            python=sys.executable,
            binary=str(install.binary(RUNTIMES[cli].cli.command)),
            log=str(log),
            stdin_marks=[STEER, ANSWERS[cli]],
            stdout_marks=[ASKS[cli]],
        )
    )
    program.chmod(0o755)
    return program, log


def relayed(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


@dataclass
class Steers:
    """The builder's turns of a steer card: a command, again and again."""

    command_s: float
    handed: asyncio.Queue[int] = field(default_factory=asyncio.Queue)
    #: steer number -> when the provider received the request carrying it, and the end
    #: of the command before that request.
    received: dict[int, tuple[float, float]] = field(default_factory=dict)
    rounds: int = 0

    def turn(self, seen: Seen) -> Shell:
        now = time.time()
        body = json.dumps(seen.body)
        for found in re.findall(rf"{STEER}(\d+)", body):
            if int(found) not in self.received:
                # The command printed when it ended (`date`): the tool's result.
                ended = re.findall(r"(\d{10}\.\d+)", "".join(seen.tool_results[-1:]))
                self.received[int(found)] = (now, float(ended[-1]) if ended else now)
        self.rounds += 1
        self.handed.put_nowait(self.rounds)
        return Shell(f"sleep {self.command_s}; date +%s.%N")


@dataclass
class Approvals:
    """The builder's turns of an approval card: a command to ask for, again and again."""

    cli: str
    outputs: list[float] = field(default_factory=list)
    rounds: int = 0

    def turn(self, seen: Seen) -> Shell | Escalate:
        if self.rounds:
            self.outputs.append(time.time())
        self.rounds += 1
        if self.cli == "codex":
            return Escalate(f"echo approved {self.rounds}", "It runs outside the sandbox.")
        return Shell(f"python3 -c 'print({self.rounds})'")


async def steer_card(room: Room, slug: str, steers: Steers, count: int, first: int, lead: float):
    """`count` steers into one card's builder run; returns when each left the client."""
    sent: dict[int, float] = {}
    await room.say(f"/start {slug}")
    for number in range(first, first + count):
        await asyncio.wait_for(steers.handed.get(), 120)
        await asyncio.sleep(lead)  # the command runs: the agent waits between tool calls
        sent[number] = time.time()
        await room.say(f"/steer {slug} {STEER}{number} keep the tabs")
    await room.bot_says(rf"{slug}: review approve", within=300)
    return sent


async def approval_card(room: Room, slug: str, count: int) -> tuple[list[float], list[float]]:
    """`count` approvals, each allowed with 👍 once the owner's client has it."""
    seen_at, thumbs_at = [], []
    await room.say(f"/start {slug}")
    for _ in range(count):
        asked = await approval_asked(room, slug, within=120)
        seen_at.append(time.time())
        target = stanza_id(asked, room.room)
        thumbs_at.append(time.time())
        await room.react(target, "👍")
    await room.bot_says(rf"{slug}: review approve", within=300)
    return seen_at, thumbs_at


def show(name: str, samples: list[float]) -> None:
    if not samples:
        print(f"{name:<58} no samples")
        return
    ms = sorted(sample * 1000 for sample in samples)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    print(
        f"{name:<58} p50 {statistics.median(ms):8.1f}  p99 {p99:8.1f}  max {ms[-1]:8.1f} ms"
        f"  (n={len(ms)})"
    )


async def bench(args: argparse.Namespace, cli: str, info: dict[str, Any], folder: Path) -> None:
    models: dict[str, ScriptedModel] = {name: c.provider(c.key) for name, c in CLIS.items()}
    for model in models.values():
        await model.start()
    program, log = relay(folder, cli)
    bins = {command: install.binary(command) for command in TESTED}
    bins[RUNTIMES[cli].cli.command] = program
    steer_cards = [f"steer-{n}" for n in range(math.ceil(args.steers / PER_CARD))]
    approval_cards = [f"approve-{n}" for n in range(math.ceil(args.approvals / PER_CARD))]
    peers: list[XmppPeer] = []

    async def peer(account: str) -> XmppPeer:
        acc = info["xmpp"]["accounts"][account]
        made = XmppPeer(acc["jid"], acc["password"], info["xmpp"]["host"], info["xmpp"]["port"])
        peers.append(made)
        return await made.start()

    bot, room, agents = await start(
        folder,
        info,
        cli,
        bins,
        models,
        peer,
        slugs=(*steer_cards, *approval_cards),
        program=(__file__, "--bot"),
        # The default, not the tests' short one: the status message as in real use.
        progress_interval_s=30,
        iteration_limit=40,
        bot_lines=(f"max_open_approvals = {min(100, PER_CARD)}",),
    )
    sent: dict[int, float] = {}
    received: dict[int, tuple[float, float]] = {}
    seen_at: list[float] = []
    thumbs_at: list[float] = []
    outputs: list[float] = []
    try:
        left, number = args.steers, 0
        for slug in steer_cards:
            count = min(left, PER_CARD)
            steers = Steers(args.command_s)
            script(agents, steers.turn, count + 1)
            agents.script(WriteFile("done.txt", "done\n"), finish())
            sent |= await steer_card(room, slug, steers, count, number, args.lead)
            received |= steers.received
            left, number = left - count, number + count
        left = args.approvals
        for slug in approval_cards:
            count = min(left, PER_CARD)
            approvals = Approvals(cli)
            script(agents, approvals.turn, count)
            agents.script(_noting(approvals), finish())
            shown, thumbs = await approval_card(room, slug, count)
            seen_at += shown
            thumbs_at += thumbs
            outputs += approvals.outputs
            left -= count
    finally:
        await bot.stop()
        for made in peers:
            await made.stop()
        for model in models.values():
            await model.stop()

    notes = relayed(log)
    at_cli = {}
    for note in notes:
        found = re.search(rf"{STEER}(\d+)", note["line"]) if note["way"] == "in" else None
        if found and int(found[1]) not in at_cli:
            at_cli[int(found[1])] = note["t"]
    asks = [note["t"] for note in notes if note["way"] == "out"]
    answers = [note["t"] for note in notes if note["way"] == "in" and ANSWERS[cli] in note["line"]]

    bot_share = [at_cli[n] - sent[n] for n in sent if n in at_cli]
    whole = [received[n][0] - sent[n] for n in sent if n in received]
    cli_share = [
        received[n][0] - max(at_cli[n], received[n][1])
        for n in sent
        if n in received and n in at_cli
    ]
    print(
        f"{cli} via the real bot process and Prosody: {len(sent)} steers "
        f"(command {args.command_s}s, steered {args.lead}s after it was handed out), "
        f"{len(asks)} approvals"
    )
    show("steer: owner's client -> CLI stdin (the bot's share)", bot_share)
    show("steer: owner's client -> provider (incl. the command's rest)", whole)
    show("steer: CLI's share (provider - max(command end, stdin))", cli_share)
    n = min(len(asks), len(answers), len(seen_at), len(thumbs_at))
    show("approval: CLI asks -> answer at CLI stdin (round trip)", _spans(asks, answers, n))
    show("  of which the bot posting it: CLI asks -> owner's client", _spans(asks, seen_at, n))
    show("  of which the 👍: owner's client -> CLI stdin", _spans(thumbs_at, answers, n))
    show("approval: CLI's share (answer -> output at provider)", _spans(answers, outputs, n))
    missing = [number for number in sent if number not in at_cli or number not in received]
    if missing:
        print(f"steers not seen at both ends: {missing}")


def _noting(approvals: Approvals) -> Callable[[Seen], Any]:
    def last(seen: Seen) -> WriteFile:
        # The request after the last answer: that command's output.
        approvals.outputs.append(time.time())
        return WriteFile("done.txt", "done\n")

    return last


def script(agents: Agents, turn: Callable[[Seen], Any], count: int) -> None:
    agents.script(*([turn] * count))


def _spans(starts: list[float], ends: list[float], n: int) -> list[float]:
    return [end - begin for begin, end in zip(starts[:n], ends[:n], strict=True)]


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--cli", nargs="+", choices=("codex", "claude"), default=["codex", "claude"]
    )
    parser.add_argument("--steers", type=int, default=50)
    parser.add_argument("--approvals", type=int, default=20)
    parser.add_argument("--command-s", type=float, default=1.0)
    parser.add_argument("--lead", type=float, default=0.3)
    parser.add_argument("--servers", help="a running `scripts/servers` servers.json")
    parser.add_argument("--keep", help="an empty folder to work in and keep (logs, database)")
    args = parser.parse_args()
    if install.missing():
        raise SystemExit("the pinned CLIs are not installed: python -m tests.realcli.install")
    with tempfile.TemporaryDirectory(prefix="talk-bench-") as name:
        folder = Path(args.keep or name)
        with given_or_started(args.servers, folder / "servers") as info:
            for cli in args.cli:
                (folder / cli).mkdir()
                await bench(args, cli, info, folder / cli)


def unthrottled_bot(argv: list[str]) -> int:
    """The bot process (`chatbot run ...`) with room for many commands in a row: the
    owner's token bucket (10 commands, one more every 3 s) would drop most steers. A huge
    bucket runs the same bookkeeping per command; it just never runs dry."""
    from chatbot.app.cli import main as run_bot
    from chatbot.chat.intake import ChatIntake

    original = ChatIntake.from_config.__func__  # type: ignore[attr-defined]

    def from_config(cls: type, board: Any, config: Any, **options: Any) -> ChatIntake:
        return original(cls, board, config, **{"rate_capacity": 1_000_000, **options})

    ChatIntake.from_config = classmethod(from_config)  # type: ignore[method-assign]
    return run_bot(argv)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--bot"]:
        sys.exit(unthrottled_bot(sys.argv[2:]))
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
