"""The lines between the bot's driver and a real CLI it talks to, watched by a test.

`tap(monkeypatch)` puts a `Tap` between `run_model`'s conversation and the CLI's pipe,
as the capture scripts do (capture_codex_talk.py): everything the driver sends and
reads passes through unchanged and is noted, and a test awaits what the CLI said
(`until`), for instance that it took a steer, instead of sleeping for it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from runners.runtimes import run as run_module


class Tap:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.heard: list[dict[str, Any]] = []
        self._changed = asyncio.Condition()

    async def until(self, found: Callable[[Tap], Any], timeout: float = 60) -> Any:
        """The first truthy `found(tap)`, awaited line by line."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: found(self)), timeout)
            return found(self)

    async def _noted(self, into: list[dict[str, Any]], line: bytes | str) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if isinstance(message, dict):
            async with self._changed:
                into.append(message)
                self._changed.notify_all()


class _Pipe:
    """The driver's pipe, every line noted on the tap on its way."""

    def __init__(self, pipe: Any, tap: Tap) -> None:
        self._pipe = pipe
        self._tap = tap
        self.lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._copy = asyncio.ensure_future(self._copying())

    async def _copying(self) -> None:
        while (line := await self._pipe.lines.get()) is not None:
            await self._tap._noted(self._tap.heard, line)
            self.lines.put_nowait(line)
        self.lines.put_nowait(None)

    async def send(self, line: str) -> None:
        await self._tap._noted(self._tap.sent, line)
        await self._pipe.send(line)

    def waiting_on_people(self):
        return self._pipe.waiting_on_people()

    def close(self) -> None:
        self._pipe.close()


def tap(monkeypatch) -> Tap:
    """Watch the conversation of every run `run_model` starts in this test."""
    watching = Tap()
    original = run_module.run_process

    async def run_process(*args: Any, converse: Any = None, **options: Any) -> Any:
        if converse is not None:
            inner = converse

            async def converse(pipe: Any) -> None:
                await inner(_Pipe(pipe, watching))

        return await original(*args, converse=converse, **options)

    monkeypatch.setattr(run_module, "run_process", run_process)
    return watching


def codex_took_steer(tap: Tap) -> bool:
    """codex answered a `turn/steer`: the steer waits in its running turn."""
    asked = {m.get("id") for m in tap.sent if m.get("method") == "turn/steer"}
    return any(m.get("id") in asked and "result" in m for m in tap.heard)


def claude_queued(text: str) -> Callable[[Tap], bool]:
    """Claude Code queued the user message that says `text` (its `command_lifecycle`)."""

    def queued(tap: Tap) -> bool:
        stamps = {
            m.get("uuid")
            for m in tap.sent
            if m.get("type") == "user" and text in json.dumps(m.get("message"))
        }
        return any(
            m.get("type") == "command_lifecycle"
            and m.get("state") == "queued"
            and m.get("command_uuid") in stamps
            for m in tap.heard
        )

    return queued
