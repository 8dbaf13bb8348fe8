"""Helpers for the runner tests: fake CLIs, scenarios, and waiting for processes to die."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from runners.process import ProcessLimits, default_base_env

BIN = Path(__file__).resolve().parents[1] / "bin"
FAKE_CODEX = str(BIN / "codex")
FAKE_CLAUDE = str(BIN / "claude")

# Short enough to keep the suite fast, long enough for a Python fake to start.
FAST = ProcessLimits(timeout=10.0, idle_timeout=5.0, kill_grace=0.5)


def alive(pid: int) -> bool:
    """A zombie has exited; only its parent has not reaped it yet."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def group_members(pgid: int) -> list[int]:
    members = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(proc.pid) == pgid and alive(proc.pid):
                members.append(proc.pid)
        except (ProcessLookupError, PermissionError, psutil.Error):
            continue
    return members


async def wait_dead(pid: int) -> None:
    """Await a process's exit through a pidfd: an event, not a polling loop (max 3 s)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    loop = asyncio.get_running_loop()
    exited = loop.create_future()
    loop.add_reader(fd, lambda: exited.done() or exited.set_result(None))
    try:
        await asyncio.wait_for(exited, 3.0)
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def assert_all_dead(pgid: int, *pids: int) -> None:
    """Every given process exits (awaited, at most 3 s each) and no member of the group is left.

    Awaiting rather than checking at once: a SIGKILLed process has closed its
    pipes a moment before the kernel marks it as exited.
    """
    for pid in pids:
        await wait_dead(pid)
        assert not alive(pid), pid
    assert group_members(pgid) == []


@dataclass
class FakeCli:
    """A scenario for the fake CLIs and the log of the calls they received."""

    scenario: Path
    log: Path
    env: dict[str, str]

    def write(self, *turns: dict[str, Any]) -> None:
        self.scenario.write_text(json.dumps({"turns": list(turns)}), encoding="utf-8")

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]


@pytest.fixture
def fake_cli(tmp_path: Path) -> Iterator[FakeCli]:
    scenario = tmp_path / "scenario.json"
    log = tmp_path / "calls.jsonl"
    env = default_base_env()
    env["FAKE_CLI_SCENARIO"] = str(scenario)
    env["FAKE_CLI_LOG"] = str(log)
    cli = FakeCli(scenario, log, env)
    yield cli
    # Whatever a failing test left behind must not outlive it.
    for call in cli.calls():
        for key in ("pid", "child_pid"):
            pid = call.get(key)
            if pid and alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path
