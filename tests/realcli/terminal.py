"""A shell line run the way a person pastes it into a terminal: bash in a pty of its own
(120x40), for the hand-over lines the bot prints (`codex resume ...`, `claude --resume
...`). The test plays the terminal: it answers the cursor-position queries a TUI waits
for, until the event it awaits happened; then the whole session is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import pty
import signal
import struct
import termios
from collections.abc import Mapping

#: What a TUI asks a terminal for (where the cursor is), and a terminal's answer.
CURSOR_QUERY, CURSOR_AT = b"\x1b[6n", b"\x1b[1;1R"


async def run_until(line: str, env: Mapping[str, str], done: asyncio.Event, within: float) -> bytes:
    """Run `line` in a terminal until `done` is set (at most `within` seconds); returns
    what it showed. The terminal's session is killed at the end, whatever happened."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session of its own, the pty its terminal
        os.execvpe("bash", ["bash", "-c", line], {**env, "TERM": "xterm-256color"})
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    screen = bytearray()
    loop = asyncio.get_running_loop()

    def readable() -> None:
        try:
            said = os.read(fd, 65536)
        except OSError:  # the program ended and its terminal closed
            loop.remove_reader(fd)
            return
        screen.extend(said)
        for _ in range(said.count(CURSOR_QUERY)):
            os.write(fd, CURSOR_AT)

    loop.add_reader(fd, readable)
    try:
        await asyncio.wait_for(done.wait(), within)
    finally:
        loop.remove_reader(fd)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    return bytes(screen)
