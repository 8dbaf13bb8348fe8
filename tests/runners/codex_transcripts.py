"""Transcripts of the pinned codex over `codex app-server` (tests/runners/data/
codex_app_server/, captured by tests/realcli/capture_codex_talk.py) and a codex that
plays them back to the bot's driver, for the unit tests of runners/runtimes/codex_talk.py
and codex_wire.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from runners.runtimes import Mode, RunRequest

DATA = Path(__file__).parent / "data" / "codex_app_server"


def transcript(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines()]


def stdout_of(name: str) -> str:
    """What codex printed in a captured run: its side of the conversation."""
    return "".join(
        json.dumps(entry["message"]) + "\n"
        for entry in transcript(name)
        if entry["from"] == "codex"
    )


def request(name: str = "first", **fields: Any) -> RunRequest:
    """The request of a captured run (its folder as the transcript writes it)."""
    values: dict[str, Any] = {
        "binary": "codex",
        "cwd": Path(f"/captured/{name}/repo"),
        "prompt": "Do the task.",
        "mode": Mode.WORKSPACE_WRITE,
    }
    return RunRequest(**(values | fields))


def thread_of(name: str) -> str:
    return next(
        entry["message"]["result"]["thread"]["id"]
        for entry in transcript(name)
        if entry["message"].get("id") == "thread" and "result" in entry["message"]
    )


class Codex:
    """A `Pipe` that plays codex's side of a captured run: it checks every line the
    driver sends against the transcript and answers with what codex said next.

    `extra` changes the play: {index: [messages]} says more after that line of codex.
    Anything the transcript does not expect is a problem the test fails on, except a
    `turn/steer` codex cannot take (after the turn, or with `refuse_steers`), answered
    as codex does: "no active turn to steer". As the real one, it prints nothing more
    after the transcript and ends its output only when its stdin closes (`close`), or
    when a test says it died (`die`). `on_read[index]` runs when the driver reads that
    line of codex.
    """

    def __init__(
        self,
        name: str,
        extra: dict[int, list[dict[str, Any]]] | None = None,
        *,
        refuse_steers: bool = False,
    ) -> None:
        self.script = transcript(name)
        self.extra = extra or {}
        self.extra_ids = [
            m.get("id") for more in self.extra.values() for m in more if isinstance(m, dict)
        ]
        self.refuse_steers = refuse_steers
        #: What the driver must send instead of a captured line, by index.
        self.instead: dict[int, dict[str, Any]] = {}
        self.on_read: dict[int, Callable[[], None]] = {}
        self.lines = _Reads(self)
        self.sent: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.waiting = 0
        self.at = 0
        self.over = False
        self.dead = False

    def start(self) -> Codex:
        self._play()
        return self

    def _play(self) -> None:
        while self.at < len(self.script) and self.script[self.at]["from"] == "codex":
            message = self.script[self.at]["message"]
            self.lines.put_nowait((self.at, json.dumps(message).encode()))
            self.over = self.over or message.get("method") == "turn/completed"
            for more in self.extra.get(self.at, []):
                self.lines.put_nowait((-1, json.dumps(more).encode()))
            if self.at in self.extra:
                self.lines.put_nowait((-1, b"not json at all {"))
            self.at += 1

    async def send(self, line: str) -> None:
        message = json.loads(line)
        self.sent.append(message)
        if self.dead:
            return  # nobody reads any more
        if "method" not in message and message.get("id") in self.extra_ids:
            return  # an answer to a request a test added: the test looks at it
        if self.at >= len(self.script):
            self.problems.append(f"sent {message} after the transcript's end")
            return
        if message.get("method") == "turn/steer" and (self.over or self.refuse_steers):
            error = {"code": -32600, "message": "no active turn to steer"}
            self.lines.put_nowait((-1, json.dumps({"error": error, "id": message["id"]}).encode()))
            return
        expected = self.instead.get(self.at, self.script[self.at]["message"])
        if message != expected:
            self.problems.append(f"sent {message}, codex expected {expected}")
            return
        self.at += 1
        self._play()

    @contextlib.contextmanager
    def waiting_on_people(self) -> Iterator[None]:
        self.waiting += 1
        try:
            yield
        finally:
            self.waiting -= 1

    def die(self) -> None:
        self.dead = True
        self.lines.put_nowait((-1, None))

    def close(self) -> None:
        self.die()


class _Reads(asyncio.Queue):
    """Codex's lines as the driver reads them, running `Codex.on_read` hooks on the way."""

    def __init__(self, codex_side: Codex) -> None:
        super().__init__()
        self._codex = codex_side

    async def get(self) -> bytes | None:
        index, line = await super().get()
        hook = self._codex.on_read.get(index)
        if hook is not None:
            hook()
        return line


def index_of(name: str, found: Callable[[dict[str, Any]], bool]) -> int:
    """The first line of codex in a transcript that `found` says yes to."""
    return next(
        index
        for index, entry in enumerate(transcript(name))
        if entry["from"] == "codex" and found(entry["message"])
    )


def command_started(message: dict[str, Any]) -> bool:
    item = message.get("params", {}).get("item", {})
    return message.get("method") == "item/started" and item.get("type") == "commandExecution"
