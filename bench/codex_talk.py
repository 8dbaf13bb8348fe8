"""Talking to the real codex while it works: how long a steer and an approval take.

The pinned codex (.agent-clis/, `python -m tests.realcli.install`) runs as the bot runs
it, through `codex app-server` and the bot's driver (runners/runtimes/codex_talk.py,
`run_model(..., conversation=...)`), against the scripted Responses provider on
127.0.0.1. For each of --runs runs it measures, on this process's monotonic clock:

- steer, agent on a command: the model runs `sleep --sleep`; `Conversation.steer()`
  is called when the command starts (its progress step); until the provider receives
  the request carrying the text. Codex delivers a steer at its next model request, so
  this includes the rest of the command; "after the command" counts from the moment
  the command ended (it writes the time itself).
- steer, agent idle on the model: the provider holds its answer to a request (the
  agent waits for the model, between tool calls); `steer()` is called, then the held
  answer is released (a tool call); until the request carrying the text arrives.
- approval round trip: the model asks to run a command outside the sandbox; from the
  provider handing out that tool call to the bot's `decide` being called (CLI -> bot),
  and from the allow returned to the provider receiving the command's output
  (bot -> CLI -> command -> next model request).

Prints p50 / p90 / max in milliseconds per measure; asserts nothing.

    PYTHONPATH=. .venv/bin/python bench/codex_talk.py [--runs 20] [--sleep 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runners.process import ProcessLimits  # noqa: E402
from runners.runtimes import ApprovalAsked, Conversation, Decision, Mode, run_model  # noqa: E402
from tests.pipeline.harness import make_repo  # noqa: E402
from tests.realcli import install  # noqa: E402
from tests.realcli.clis.codex import CLI  # noqa: E402
from tests.realcli.harness import child_env, run_request  # noqa: E402
from tests.realcli.openai_responses import Escalate, ResponsesModel  # noqa: E402
from tests.realcli.providers import Say, Seen, Shell  # noqa: E402

LIMITS = ProcessLimits(timeout=60, idle_timeout=60, kill_grace=1.0)
TEXT = "Steered: use tabs."


async def never(asked: ApprovalAsked) -> Decision:
    return Decision(False)


async def one_run(root: Path, model: ResponsesModel, prompt: str, conversation, **options):
    root.mkdir(parents=True)
    repo = make_repo(root, {})
    request = run_request(
        "codex",
        {"codex": install.binary("codex")},
        model,
        root,
        repo,
        prompt,
        mode=Mode.WORKSPACE_WRITE,
    )
    result = await run_model(
        "codex",
        request,
        limits=LIMITS,
        base_env=child_env(root / "home"),
        conversation=conversation,
        **options,
    )
    if not result.ok:
        raise SystemExit(f"run failed: {result.failure}")
    return result


async def steer_on_command(root: Path, model: ResponsesModel, sleep: float) -> tuple[float, float]:
    # Wall-clock times here: the command notes when it ended with `date` (in /tmp,
    # which its sandbox may write).
    received: dict[str, float] = {}
    ended = root / "command-ended"

    def heard(seen: Seen) -> Say:
        received["at"] = time.time()
        assert TEXT in seen.user_texts, seen.user_texts
        return Say("ok")

    model.script(Shell(f"sleep {sleep}; date +%s.%N > {ended}"), heard)
    conversation = Conversation(never)
    sent: dict[str, float] = {}

    def on_step(step: str) -> None:
        if step.startswith("ran: sleep"):
            sent["at"] = time.time()
            conversation.steer(TEXT, "s")

    await one_run(root, model, "Sleep.", conversation, on_step=on_step)
    command_end = float(ended.read_text())
    return received["at"] - sent["at"], received["at"] - max(sent["at"], command_end)


async def steer_when_idle(root: Path, model: ResponsesModel) -> float:
    held = asyncio.Event()
    release = asyncio.Event()
    received: dict[str, float] = {}

    async def thinking(seen: Seen) -> Shell:
        held.set()
        await release.wait()
        return Shell("true")

    def heard(seen: Seen) -> Say:
        received["at"] = time.monotonic()
        return Say("ok")

    def carrying(seen: Seen):
        # The request after the steer: the held answer may have been dropped for it.
        if TEXT in seen.user_texts:
            return heard(seen)
        return Say("ok")

    model.script(thinking)
    model.responder = carrying
    conversation = Conversation(never)
    run = asyncio.ensure_future(one_run(root, model, "Think.", conversation))
    await held.wait()
    sent = time.monotonic()
    conversation.steer(TEXT, "s")
    release.set()
    await run
    model.responder = None
    return received["at"] - sent


async def approval(root: Path, model: ResponsesModel) -> tuple[float, float]:
    times: dict[str, float] = {}

    def asks(seen: Seen) -> Escalate:
        times["handed"] = time.monotonic()
        return Escalate("echo allowed", "Outside the sandbox.")

    def output(seen: Seen) -> Say:
        times["output"] = time.monotonic()
        return Say("ok")

    async def decide(asked: ApprovalAsked) -> Decision:
        times["asked"] = time.monotonic()
        return Decision(True)

    model.script(asks, output)
    await one_run(root, model, "Ask.", Conversation(decide))
    return times["asked"] - times["handed"], times["output"] - times["asked"]


def show(name: str, samples: list[float]) -> None:
    ms = sorted(sample * 1000 for sample in samples)
    p90 = ms[min(len(ms) - 1, int(0.9 * len(ms)))]
    print(
        f"{name:<44} p50 {statistics.median(ms):8.1f}  p90 {p90:8.1f}  max {ms[-1]:8.1f} ms"
        f"  (n={len(ms)})"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sleep", type=float, default=0.5)
    args = parser.parse_args()
    if install.missing():
        raise SystemExit("the pinned codex is not installed: python -m tests.realcli.install")
    model = ResponsesModel(CLI.key)
    await model.start()
    total, after, idle, to_bot, to_cli = [], [], [], [], []
    try:
        with tempfile.TemporaryDirectory(prefix="codex-talk-bench-") as folder:
            for number in range(args.runs):
                base = Path(folder) / str(number)
                base.mkdir()
                whole, rest = await steer_on_command(base / "command", model, args.sleep)
                total.append(whole)
                after.append(rest)
                idle.append(await steer_when_idle(base / "idle", model))
                asked, answered = await approval(base / "approval", model)
                to_bot.append(asked)
                to_cli.append(answered)
    finally:
        await model.stop()
    print(f"codex {CLI.models[0]} via app-server, {args.runs} runs, command sleep {args.sleep}s")
    show("steer -> provider, agent on a command", total)
    show("  of which after the command ended", after)
    show("steer -> provider, agent idle on the model", idle)
    show("approval: tool call handed out -> decide()", to_bot)
    show("approval: allow -> output at the provider", to_cli)


if __name__ == "__main__":
    asyncio.run(main())
