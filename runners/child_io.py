"""A started child's pipes and its process group: stdout captured up to a cap with the
tail of stderr, stdin fed, the child's own exit noticed, the whole group signalled.

The pieces `runners.process.run_process` runs a child with; what a run's outcome is
(its watchdogs, its limits) is decided there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable
from typing import Any

# run_process's logger: what happens to one run's group is logged under one name.
log = logging.getLogger("runners.process")

_READ_CHUNK = 64 * 1024


def signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Signal a process group; False when no process of it is left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # A pid reused by someone else's group; never ours to signal.
        log.warning("not allowed to signal process group %s", pgid)
        return False
    return True


class Capture:
    """Collects stdout up to a cap and the tail of stderr, and notes when output arrives."""

    def __init__(
        self, output_cap: int, stderr_tail: int, on_output: Callable[[bytes], None] | None
    ) -> None:
        self._output_cap = output_cap
        self._stderr_tail = stderr_tail
        self._on_output = on_output
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.capped = asyncio.Event()
        self.last_output = asyncio.get_running_loop().time()
        #: The child waits for a person (Pipe.waiting_on_people): silence is no hang.
        self.waiting = False
        self.on_line_chunk: Callable[[bytes], None] | None = None
        self.on_end: Callable[[], None] | None = None

    async def read_stdout(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_READ_CHUNK):
            self.last_output = asyncio.get_running_loop().time()
            room = self._output_cap - len(self.stdout)
            self.stdout += chunk[: max(room, 0)]
            if self._on_output is not None and room > 0:
                self._on_output(chunk[:room])
            if self.on_line_chunk is not None and room > 0:
                self.on_line_chunk(chunk[:room])
            if len(chunk) > room:
                self.capped.set()
                break
        if self.on_end is not None:
            self.on_end()

    async def read_stderr(self, stream: asyncio.StreamReader) -> None:
        tail = self._stderr_tail
        while chunk := await stream.read(_READ_CHUNK):
            self.last_output = asyncio.get_running_loop().time()
            self.stderr += chunk
            if len(self.stderr) > tail:
                del self.stderr[:-tail]


async def feed_stdin(stream: asyncio.StreamWriter, data: bytes) -> None:
    # A child may exit without reading its stdin; that is its business, not an error here.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        if data:
            stream.write(data)
            await stream.drain()
    stream.close()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        await stream.wait_closed()


async def terminate_group(
    pgid: int, exited: asyncio.Future[None], readers: asyncio.Future[Any], grace: float
) -> None:
    """SIGTERM the group, give it `grace` seconds, then SIGKILL whatever is left.

    Readers reaching EOF means every process holding the pipes is gone, so that
    (with the leader's exit) is what the grace period waits for. The SIGKILL is in
    a `finally` so that a second cancellation during the grace still kills.
    """
    try:
        if signal_group(pgid, signal.SIGTERM):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(asyncio.shield(exited), asyncio.shield(readers)),
                    timeout=grace,
                )
    finally:
        signal_group(pgid, signal.SIGKILL)


class ExitAwareProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The stream protocol plus a future that resolves when the child itself exits."""

    def __init__(self, *, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)
