"""A child process's output, read line by line while it runs, and ending it with its
own children: for tests that start a real `chatbot worker` or bot and wait on what it says."""

from __future__ import annotations

import asyncio
import contextlib
import re

import psutil


class Output:
    """A child's output, line by line, for waiting on what it says."""

    def __init__(self, process: asyncio.subprocess.Process):
        self.process = process
        self.lines: list[str] = []

    async def said(self, pattern: str, timeout: float) -> str:
        async with asyncio.timeout(timeout):
            for line in self.lines:
                if re.search(pattern, line):
                    return line
            assert self.process.stdout is not None
            while raw := await self.process.stdout.readline():
                self.lines.append(raw.decode())
                if re.search(pattern, self.lines[-1]):
                    return self.lines[-1]
        raise AssertionError(f"the child ended without {pattern!r}:\n{''.join(self.lines)}")

    async def rest(self) -> str:
        assert self.process.stdout is not None
        self.lines.append((await self.process.stdout.read()).decode())
        return "".join(self.lines)


def kill_tree(pid: int) -> None:
    """The process and what it started (agent runs live in process groups of their own)."""
    with contextlib.suppress(psutil.NoSuchProcess):
        processes = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
        for process in processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(processes, timeout=30)
