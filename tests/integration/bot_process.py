"""The whole bot as a real process (`python -m chatbot run`) against the real servers.

Tests drive it only through what owner clients send and assert on what those
clients receive and on the card's final state in the database (read-only).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.pipeline.harness import make_repo

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "tests" / "bin"


def bot_config(
    root: Path,
    servers_info: dict[str, Any],
    *,
    xmpp: bool = True,
    matrix: bool = False,
    requesters: tuple[str, ...] = (),
    extra: str = "",
    bot_lines: tuple[str, ...] = (),
    matrix_rooms: tuple[str, ...] | None = None,
    matrix_lines: tuple[str, ...] = (),
) -> Path:
    secrets = root / "secrets"
    secrets.mkdir(exist_ok=True)
    x, m = servers_info["xmpp"], servers_info["matrix"]
    owners = [x["accounts"]["owner"]["jid"], m["accounts"]["owner"]["user_id"]]
    lines = [
        "[bot]",
        'sandbox = "off"  # the scripted stand-ins read and write test files',
        f"owners = {json.dumps(owners)}",
        f"requesters = {json.dumps(list(requesters))}",
        'database = "board.sqlite3"',
        'repo = "repo"',
        'workspaces = "workspaces"',
        *bot_lines,
    ]
    if xmpp:
        (secrets / "xmpp").write_text(x["accounts"]["bot"]["password"])
        lines += [
            "[xmpp]",
            f'jid = "{x["accounts"]["bot"]["jid"]}"',
            'password_file = "secrets/xmpp"',
            f'host = "{x["host"]}"',
            f"port = {x['port']}",
            f'rooms = ["{x["rooms"]["public"]}"]',
            'nick = "board"',
            'tls = "none"',
        ]
    if matrix:
        (secrets / "matrix").write_text(m["accounts"]["bot"]["password"])
        lines += [
            "[matrix]",
            f'homeserver = "{m["homeserver"]}"',
            f'user_id = "{m["accounts"]["bot"]["user_id"]}"',
            'password_file = "secrets/matrix"',
            f"rooms = {json.dumps(list(matrix_rooms or (m['rooms']['public']['room_id'],)))}",
            *matrix_lines,
        ]
    env = 'env = { FAKE_CLI_SCENARIO = "./scenario.json", FAKE_CLI_STATE = "./scenario.state.json", FAKE_CLI_LOG = "./calls.jsonl" }'
    for cli in ("codex", "claude"):
        lines += [f"[runtimes.{cli}]", f'binary = "{BIN / cli}"', env]
    lines += [
        "[lanes.light]",
        'runtime = "codex"',
        'model = "gpt-5-codex-mini"',
        'reasoning_effort = "medium"',
        "iteration_limit = 5",
        "concurrency = 2",
        "[roles.reviewer]",
        'runtime = "claude"',
        'model = "claude-sonnet-4-5"',
        "[escalation.models]",
        'codex = ["gpt-5-codex", "gpt-5-codex-max"]',
    ]
    path = root / "bot.toml"
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


#: Every bot process a test started and has not stopped. A test that fails half-way
#: (a start that timed out under load, an assertion before its `finally`) would leave
#: its bot logged in with the test account, answering the next tests' owners ("There is
#: no card 'indent'"); the integration conftest stops what is left after each test.
LIVE: list[BotProcess] = []


@dataclass(eq=False)
class BotProcess:
    root: Path
    config: Path
    process: asyncio.subprocess.Process | None = None
    logs: list[Path] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    _pump: asyncio.Task | None = None
    _news: asyncio.Event = field(default_factory=asyncio.Event)
    #: Extra environment for the bot process (e.g. systemd's NOTIFY_SOCKET).
    env: dict[str, str] = field(default_factory=dict)
    #: What the interpreter runs: the bot's own entry point, or a script that wraps it.
    program: tuple[str, ...] = ("-m", "chatbot")

    async def start(self) -> BotProcess:
        log = self.root / f"bot-{len(self.logs) + 1}.log"
        self.logs.append(log)
        self.lines = []
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            *self.program,
            "run",
            "--config",
            str(self.config),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env},
        )
        self._pump = asyncio.create_task(self._read(log))
        LIVE.append(self)
        return self

    async def _read(self, log: Path) -> None:
        assert self.process is not None and self.process.stdout is not None
        with open(log, "w", encoding="utf-8") as handle:
            async for raw in self.process.stdout:
                line = raw.decode(errors="replace")
                handle.write(line)
                handle.flush()
                self.lines.append(line)
                self._news.set()
        self._news.set()

    async def logged(self, pattern: str, within: float = 30.0, *, times: int = 1) -> str:
        """Await the bot's log line matching `pattern` (its own account of being ready);
        with `times`, its `times`-th such line."""
        regex = re.compile(pattern)
        seen = found = 0
        async with asyncio.timeout(within):
            while True:
                self._news.clear()  # before scanning, so no line slips between scan and wait
                for line in self.lines[seen:]:
                    if regex.search(line):
                        found += 1
                        if found == times:
                            return line
                seen = len(self.lines)
                if self._pump is not None and self._pump.done():
                    raise AssertionError(f"the bot exited before logging {pattern!r}")
                await self._news.wait()

    async def stop(self) -> None:
        if self in LIVE:
            LIVE.remove(self)
        if self.process and self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 15)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        if self._pump is not None:
            await self._pump

    async def kill(self) -> None:
        assert self.process is not None
        if self in LIVE:
            LIVE.remove(self)
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait()
        if self._pump is not None:
            await self._pump

    def log_text(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in self.logs if p.exists())

    # --- reading the bot's database (read-only, like `chatbot card --json`) ---------

    def query(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        uri = f"file:{self.root / 'board.sqlite3'}?mode=ro"
        with sqlite3.connect(uri, uri=True, timeout=10) as conn:
            conn.row_factory = sqlite3.Row
            return conn.execute(sql, params).fetchall()

    def phase(self, slug: str) -> str | None:
        rows = self.query("SELECT phase FROM cards WHERE slug = ?", (slug,))
        return rows[0]["phase"] if rows else None

    def card(self, slug: str) -> dict[str, Any]:
        rows = self.query("SELECT * FROM cards WHERE slug = ?", (slug,))
        return dict(rows[0]) if rows else {}


def write_scenario(root: Path, turns: list[dict[str, Any]]) -> None:
    (root / "scenario.json").write_text(json.dumps({"turns": turns}))


def prepare(root: Path, intents: dict[str, str]) -> Path:
    return make_repo(root, intents)


async def wait_for_occupant(peer: Any, room: str, nick: str, within: float = 20.0) -> None:
    """Resolve when `nick` is present in the room the peer has joined (the bot came in)."""
    with occupant_arrival(peer, room, nick) as arrived:
        if nick in (peer.client.plugin["xep_0045"].get_roster(room) or []):
            return
        await asyncio.wait_for(arrived, within)


@contextlib.contextmanager
def occupant_arrival(peer: Any, room: str, nick: str) -> Iterator[asyncio.Future[None]]:
    """A future for the next available presence of `nick`, armed before the cause is sent.

    Needed where the nick is still listed by the peer when the wait starts (the
    previous holder's departure not yet heard): only a presence that arrives
    after arming counts.
    """
    arrived: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_presence(presence: Any) -> None:
        if (
            presence["from"].resource == nick
            and presence["type"] != "unavailable"
            and not arrived.done()
        ):
            arrived.set_result(None)

    peer.client.add_event_handler(f"muc::{room}::presence", on_presence)
    try:
        yield arrived
    finally:
        peer.client.del_event_handler(f"muc::{room}::presence", on_presence)
