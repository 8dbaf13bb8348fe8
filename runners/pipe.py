"""A conversation's hold on a child process: lines to its stdin, its stdout lines.

`runners.process.run_process(converse=...)` makes one for a run the bot talks to (a
steer, an approval's answer) and feeds it what the child prints; the CLI's driver
(runners/runtimes/*_talk.py) reads and writes through it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Protocol


class Watched(Protocol):
    """What the run's watchdog keeps of the child's output (runners.child_io.Capture)."""

    last_output: float
    waiting: bool


class OwnerWait:
    """A run waits for people outside its conversation (an owner's answer to a question the
    agent asked through the bot's tools, `runners.tool_server`): while `waiting()` is held
    the idle watchdog does not count, and the silence starts anew when it ends. The run's
    own time limit does not count either: the time spent waiting for an answer is added
    to it, so an answer that comes late in a long run does not find the run killed.

    Made before the run starts and given to `run_process(hold=...)`, which reads it.
    """

    def __init__(self) -> None:
        self.waits = 0
        #: When the last wait ended (the event loop's clock); None: none has.
        self.ended_at: float | None = None
        #: Seconds some wait was held, up to the start of the current one.
        self._held = 0.0
        self._since: float | None = None

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        if self.waits == 0:
            self._since = loop.time()
        self.waits += 1
        try:
            yield
        finally:
            self.waits -= 1
            self.ended_at = loop.time()
            if self.waits == 0 and self._since is not None:
                self._held += self.ended_at - self._since
                self._since = None

    def held(self, now: float) -> float:
        """Seconds the run has waited for people so far (`now`: the loop's clock)."""
        ongoing = now - self._since if self._since is not None else 0.0
        return self._held + ongoing


class Pipe:
    """A conversation's hold on the child: write lines to its stdin, read its stdout lines.

    Given to `run_process(converse=...)`. Lines arrive as they are printed (complete
    lines only, without the newline; one over `MAX_LINE_BYTES` is dropped, the capture
    still holds it); `None` says stdout ended. While `waiting_on_people()` is held (an
    approval the owner has not answered) the idle watchdog does not count: the CLI is
    silent because it waits for us.
    """

    MAX_LINE_BYTES = 4 * 1024 * 1024

    def __init__(self, stdin: asyncio.StreamWriter, capture: Watched) -> None:
        self._stdin = stdin
        self._capture = capture
        self.lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._partial = bytearray()
        self._skipping = False
        self._waits = 0

    async def send(self, line: bytes | str) -> None:
        """Write one line (a newline is added); a child that is gone is not an error here,
        its exit is the run's outcome."""
        data = line.encode() if isinstance(line, str) else line
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
            self._stdin.write(data + b"\n")
            await self._stdin.drain()

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
            self._stdin.close()

    @contextlib.contextmanager
    def waiting_on_people(self) -> Iterator[None]:
        self._waits += 1
        self._capture.waiting = True
        try:
            yield
        finally:
            self._waits -= 1
            self._capture.waiting = self._waits > 0
            self._capture.last_output = asyncio.get_running_loop().time()

    def _feed(self, chunk: bytes) -> None:
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            if not self._skipping:
                self._partial += chunk[start:end]
                if self._partial.strip():
                    self.lines.put_nowait(bytes(self._partial))
            self._partial.clear()
            self._skipping = False
            start = end + 1
        if not self._skipping:
            self._partial += chunk[start:]
            if len(self._partial) > self.MAX_LINE_BYTES:
                self._partial.clear()
                self._skipping = True

    def _ended(self) -> None:
        if self._partial.strip() and not self._skipping:
            self.lines.put_nowait(bytes(self._partial))
        self._partial.clear()
        self.lines.put_nowait(None)
