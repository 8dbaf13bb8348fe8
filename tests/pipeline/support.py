"""Helpers for the pipeline failure and concurrency tests.

- `configure` changes keys of the harness configuration that the harness already
  sets (TOML cannot reopen a table from `extra_config`), failing loudly if the
  harness text it expects is gone.
- `Fifo` is a named pipe the fake CLI's `touch_file` writes to, so a test awaits
  "the run has started" as an event instead of polling.
- `assert_group_gone` checks that no process of a run's process group is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sqlite3
from pathlib import Path
from typing import Any

import psutil

from tests.pipeline import harness

OWNER = "owner@example.org"
CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def configure(monkeypatch, replacements: dict[str, str]) -> None:
    """Replace exact pieces of the harness CONFIG for this test only."""
    text = harness.CONFIG
    for old, new in replacements.items():
        assert text.count(old) == 1, f"the harness CONFIG no longer holds {old!r} exactly once"
        text = text.replace(old, new)
    monkeypatch.setattr(harness, "CONFIG", text)


def operator_role(body: str) -> dict[str, str]:
    """A replacement for the harness's `[roles.operator]` table (`body`: TOML lines)."""
    return {"[roles.operator]\ntimeout_s = 30\n": "[roles.operator]\n" + body}


class Fifo:
    """A named pipe held open read-write, so writers never block and readers never see EOF."""

    def __init__(self, path: Path):
        os.mkfifo(path)
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        self._buffer = b""

    async def line(self, timeout: float) -> str:
        loop = asyncio.get_running_loop()
        while b"\n" not in self._buffer:
            ready: asyncio.Future[None] = loop.create_future()
            loop.add_reader(self._fd, _settle, ready)
            try:
                await asyncio.wait_for(ready, timeout)
            finally:
                loop.remove_reader(self._fd)
            with contextlib.suppress(BlockingIOError):
                self._buffer += os.read(self._fd, 4096)
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def close(self) -> None:
        os.close(self._fd)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is `pgid`."""
    found = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pgid and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process.pid)
        except (ProcessLookupError, psutil.NoSuchProcess):
            continue
    return found


async def assert_group_gone(call: dict[str, Any], within: float = 10.0) -> None:
    """No process of the logged run survives: not the CLI, not its helper, nothing in its group.

    Waits (bounded) for the processes to die: an exit is an event, not a delay.
    On failure the survivors are killed, so a failing test leaves nothing behind.
    """
    pids = [pid for pid in (call.get("pid"), call.get("child_pid")) if pid]
    pgid = call["pgid"]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        left = sorted({*(pid for pid in pids if _running(pid)), *group_members(pgid)})
        if not left:
            return
        if loop.time() >= deadline:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"processes of run group {pgid} survived the run: {left}")
        await asyncio.sleep(0.05)


def tree_snapshot(root: Path) -> dict[str, bytes]:
    """Every file below `root` outside .git, with its content."""
    found = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if relative.parts[0] == ".git" or not path.is_file():
            continue
        found[str(relative)] = path.read_bytes()
    return found


def dump_database(path: Path) -> str:
    """Every row of every table, as SQL text."""
    connection = sqlite3.connect(path)
    try:
        return "\n".join(connection.iterdump())
    finally:
        connection.close()


async def jobs_of(h: harness.Harness, card_id: int) -> list[sqlite3.Row]:
    return await h.store.reader.fetchall(
        "SELECT * FROM jobs WHERE card_id = ? ORDER BY id", (card_id,)
    )


async def run_idle(h: harness.Harness, timeout: float = 20.0) -> None:
    """Run the worker until idle, but fail (rather than hang) if it never gets there."""
    await asyncio.wait_for(h.run_until_idle(), timeout)


def kill_strays(h: harness.Harness) -> list[int]:
    """SIGKILL any still-running process a fake CLI of this harness logged (its own or
    its helper), so a failing test leaves nothing behind. Returns the pids killed."""
    killed = []
    for call in h.calls():
        for pid in (call.get("pid"), call.get("child_pid")):
            if not pid or not _running(pid):
                continue
            try:
                environ = psutil.Process(pid).environ()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            # Only a process that really is this harness's fake (pids get reused).
            if environ.get("FAKE_CLI_LOG") == str(h.log):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                killed.append(pid)
    return killed
