"""The real bot process over the real Prosody, its builder the REAL codex or claude talking
to a scripted loopback provider in the test's process (issue 25's end-to-end tests,
tests/integration/test_talk_real.py, and bench/talk.py).

One provider plays every role of a card (`Agents`): the operator sends it to the light
lane of the CLI under test, the reviewer approves the commit its prompt names, and the
builder's turns are the test's. What the provider received is the ground truth of what
reached the agent.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import psutil

from tests.integration.bot_process import BotProcess, wait_for_occupant
from tests.integration.e2e import BOT_NICK, WITHIN, Room
from tests.pipeline.harness import builder_answer, git, make_repo
from tests.realcli.clis import CLIS
from tests.realcli.harness import (
    MODELS,
    RUNTIME,
    binary,
    direct,
    judge_the_commit_in_the_prompt,
    write_secrets,
)
from tests.realcli.providers import Say, ScriptedModel, Seen, Steps

#: The CLIs whose runs the bot talks to (runners/runtimes/*_talk.py).
TALKING = ("codex", "claude")

INTENT = "# Indentation\n\nIndent the sources consistently.\n"

ROLE = """
[roles.{role}]
runtime = "{cli}"
model = "{model}"
timeout_s = 90
idle_timeout_s = 90
"""

Turn = Steps | Callable[[Seen], Any]


class Agents:
    """Every role of the card through one provider: the operator and the reviewer answer
    by themselves, the builder's requests take `builder` turns in order and are kept in
    `built` (a turn may be a function of the request, and async, to await something)."""

    def __init__(self, cli: str, model: ScriptedModel) -> None:
        self.cli = cli
        self.model = model
        self.builder: deque[Turn] = deque()
        self.built: list[Seen] = []
        #: Set when the builder's request number n (1-based) arrived.
        self._arrived: dict[int, asyncio.Event] = {}
        model.responder = self.respond

    def script(self, *turns: Turn) -> None:
        self.builder.extend(turns)

    async def respond(self, seen: Seen) -> Steps:
        first = seen.user_texts[0] if seen.user_texts else ""
        if "OPERATOR-DECISION" in first:
            return Say(direct(self.cli))
        if "REVIEW-RESULT" in first:
            return judge_the_commit_in_the_prompt(seen)
        self.built.append(seen)
        self.arrival(len(self.built)).set()
        if not self.builder:
            self.model.problems.append(f"no builder turn left for request {len(self.built)}")
            return Say("(no builder turn left)")
        turn = self.builder.popleft()
        steps = turn(seen) if callable(turn) else turn
        if asyncio.iscoroutine(steps):
            steps = await steps
        return steps

    def arrival(self, number: int) -> asyncio.Event:
        return self._arrived.setdefault(number, asyncio.Event())

    async def request(self, number: int, within: float = WITHIN) -> Seen:
        """The builder's request `number` (1-based), once it arrived."""
        await asyncio.wait_for(self.arrival(number).wait(), within)
        return self.built[number - 1]


def finish(subject: str = "Indent with tabs") -> Say:
    """The builder's final answer: the commit message and report markers."""
    return Say(builder_answer(subject))


def bot_config(
    root: Path,
    servers_info: dict[str, Any],
    cli: str,
    bins: Mapping[str, Path],
    urls: Mapping[str, str],
    *,
    bot_lines: tuple[str, ...] = (),
    requesters: tuple[str, ...] = (),
    xmpp_lines: tuple[str, ...] = (),
    extra: str = "",
    progress_interval_s: float = 0.3,
    iteration_limit: int = 8,
) -> Path:
    """The bot's configuration: XMPP to the real Prosody (`xmpp_lines` added to its
    section), every CLI real with its provider's `base_url` and key file, the light lane
    and every role on `cli`."""
    write_secrets(root)
    for name in CLIS:
        (root / "home" / name).mkdir(parents=True, exist_ok=True)
    x = servers_info["xmpp"]
    (root / "secrets" / "xmpp").write_text(x["accounts"]["bot"]["password"])
    model, effort = MODELS[cli]
    lines = [
        "[bot]",
        f"owners = {json.dumps([x['accounts']['owner']['jid']])}",
        f"requesters = {json.dumps(list(requesters))}",
        'database = "board.sqlite3"',
        'repo = "repo"',
        'workspaces = "workspaces"',
        # The run's message shows its step soon: the owner steers when it shows.
        f"progress_interval_s = {progress_interval_s}",
        *bot_lines,
        "[xmpp]",
        f'jid = "{x["accounts"]["bot"]["jid"]}"',
        'password_file = "secrets/xmpp"',
        f'host = "{x["host"]}"',
        f"port = {x['port']}",
        f'rooms = ["{x["rooms"]["public"]}"]',
        f'nick = "{BOT_NICK}"',
        'tls = "none"',
        *xmpp_lines,
    ]
    runtimes = "".join(
        RUNTIME.format(name=name, binary=binary(bins, name), url=urls[name], env=_env(name))
        for name in CLIS
    )
    roles = "".join(
        ROLE.format(role=role, cli=cli, model=model) for role in ("operator", "reviewer")
    )
    lane = (
        f'\n[lanes.light]\nruntime = "{cli}"\nmodel = "{model}"\n'
        f'reasoning_effort = "{effort}"\niteration_limit = {iteration_limit}\ntimeout_s = 600\n'
        "idle_timeout_s = 120\n"
    )
    path = root / "bot.toml"
    path.write_text("\n".join(lines) + "\n" + runtimes + lane + roles + extra)
    return path


def _env(name: str) -> str:
    # The CLI's HOME is the test's: the hand-over runs in it as "the same user".
    values = {"HOME": f"./home/{name}", **CLIS[name].env}
    return ", ".join(f"{key} = {json.dumps(value)}" for key, value in values.items())


async def start(
    root: Path,
    servers_info: dict[str, Any],
    cli: str,
    bins: Mapping[str, Path],
    models: Mapping[str, ScriptedModel],
    peer_factory: Callable,
    *,
    slugs: tuple[str, ...] = ("indent",),
    program: tuple[str, ...] = ("-m", "chatbot"),
    **options: Any,
) -> tuple[BotProcess, Room, Agents]:
    """The bot process with planned cards `slugs`, the owner in its room."""
    make_repo(root, dict.fromkeys(slugs, INTENT))
    urls = {name: model.base_url for name, model in models.items()}
    path = bot_config(root, servers_info, cli, bins, urls, **options)
    agents = Agents(cli, models[cli])
    room_jid = servers_info["xmpp"]["rooms"]["public"]
    peer = await peer_factory("owner")
    await peer.join(room_jid, "owner")
    bot = await BotProcess(root, path, program=program).start()
    await wait_for_occupant(peer, room_jid, BOT_NICK)
    await bot.logged(r"xmpp transport online", within=WITHIN)
    return bot, Room(peer, room_jid), agents


async def step_shown(room: Room, slug: str, step: str) -> Any:
    """The run's status message once it shows `step` as the agent's latest step."""
    return await room.bot_says(
        rf"{re.escape(slug)}: builder running.*Latest step: .*{re.escape(step)}"
    )


async def approval_asked(room: Room, slug: str, within: float = WITHIN) -> Any:
    """The bot's approval request in the room; not a reply to it, which quotes its first
    line ("> 🔐 ...")."""
    return await room.bot_says(rf"(?<!> )🔐 {re.escape(slug)}: the agent asks to run", within)


def builder_session(bot: BotProcess, slug: str) -> str | None:
    rows = bot.query(
        "SELECT t.session_id FROM telemetry t JOIN cards c ON c.id = t.card_id "
        "WHERE c.slug = ? AND t.role = 'builder' ORDER BY t.id DESC LIMIT 1",
        (slug,),
    )
    return rows[0]["session_id"] if rows else None


def committed(bot: BotProcess, slug: str = "indent") -> str:
    """The files the card's commit (the head of its branch) changed."""
    card = bot.card(slug)
    repo = bot.root / "repo"
    assert git(repo, "rev-parse", f"card/{slug}") == card["commit_hash"]
    return git(repo, "show", "--name-only", "--format=", card["commit_hash"])


def drained(room: Room) -> list[Any]:
    """Every message the owner's client received and no expectation took."""
    found = []
    while not room.peer.inbox.empty():
        found.append(room.peer.inbox.get_nowait())
    return found


def running(command: str) -> list[psutil.Process]:
    """Live processes whose command line holds `command`."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        line = " ".join(process.info["cmdline"] or [])
        if command in line and process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def as_the_person(cli: str, home: Path, worktree: Path) -> None:
    """What a person who used the CLI in this folder once has answered already: its
    first-run dialogs are the person's, not the line's (in dialogs that drop keys typed
    too early, so a test cannot answer them in time)."""
    if cli == "codex":
        (home / ".codex" / "config.toml").write_text(
            f'[projects."{worktree}"]\ntrust_level = "trusted"\n'
            '[notice.model_migrations]\n"gpt-5.5" = "gpt-6-sol"\n'
        )
        return
    person = home / ".claude.json"
    # The bot's sandboxed run leaves the person's ~/.claude.json alone (only ~/.claude,
    # its sessions, is the CLI's to keep): a person who used Claude Code has their own.
    settings = json.loads(person.read_text()) if person.exists() else {}
    settings["hasCompletedOnboarding"] = True
    settings.setdefault("projects", {})[str(worktree)] = {"hasTrustDialogAccepted": True}
    settings["customApiKeyResponses"] = {"approved": [CLIS[cli].key[-20:]], "rejected": []}
    person.write_text(json.dumps(settings))
