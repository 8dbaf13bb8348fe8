"""runners.process with real child processes: watchdogs, caps, cancellation, environment."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import textwrap
from pathlib import Path

import pytest

from runners.process import Outcome, ProcessLimits, run_process
from tests.runners.conftest import alive, assert_all_dead

PY = sys.executable


@pytest.fixture(autouse=True)
def _no_strays(tmp_path: Path):
    # If a test fails, the grandchild it started must not outlive it.
    yield
    pid_file = tmp_path / "child.pid"
    if pid_file.exists() and alive(pid := int(pid_file.read_text())):
        os.kill(pid, signal.SIGKILL)


def script(body: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(body)]


# A leader that starts a grandchild sharing its stdout, reports the grandchild's
# pid through the file named in argv[1], and then does what `tail` says. With
# "ignore" both ignore SIGTERM; the leader notes its arrival in argv[1] + ".term".
SPAWNER = """
import os, signal, subprocess, sys, time
if "ignore" in sys.argv[2:]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: time.sleep(60)"])
if "ignore" in sys.argv[2:]:
    signal.signal(signal.SIGTERM, lambda *_: open(sys.argv[1] + ".term", "w").close())
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(child.pid))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
print("started", flush=True)
{tail}
"""
SILENT_TAIL = "while True: time.sleep(60)"
TRICKLE_TAIL = "while True:\n    print('.', flush=True)\n    time.sleep(0.02)"
# A silence the watchdog may measure: longer than a Python child's start under load
# (a start can take over half a second on two busy cores), short enough for a unit test.
SILENCE = 1.5


def spawner(pid_file: Path, tail: str, *flags: str) -> list[str]:
    return [*script(SPAWNER.replace("{tail}", tail)), str(pid_file), *flags]


async def test_ok_run_feeds_stdin_and_captures_stdout(tmp_path: Path) -> None:
    result = await run_process(
        script("import sys; data = sys.stdin.read(); print(data.upper())"),
        cwd=tmp_path,
        stdin="hello prompt",
        limits=ProcessLimits(timeout=10),
    )
    assert result.outcome is Outcome.OK
    assert result.exit_code == 0
    assert result.stdout == "HELLO PROMPT\n"
    assert result.duration > 0
    assert result.error == ""


async def test_nonzero_exit_keeps_stderr_tail(tmp_path: Path) -> None:
    result = await run_process(
        script("import sys; sys.stderr.write('x' * 5000 + 'the end'); sys.exit(3)"),
        cwd=tmp_path,
        limits=ProcessLimits(timeout=10, stderr_tail=100),
    )
    assert result.outcome is Outcome.EXIT_NONZERO
    assert result.exit_code == 3
    assert len(result.stderr_tail) == 100
    assert result.stderr_tail.endswith("the end")
    assert "status 3" in result.error


async def test_wall_clock_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    # Trickling output keeps the idle watchdog quiet: only the wall clock can stop it.
    result = await run_process(
        spawner(pid_file, TRICKLE_TAIL),
        cwd=tmp_path,
        limits=ProcessLimits(timeout=SILENCE + 1, idle_timeout=SILENCE, kill_grace=0.2),
    )
    assert result.outcome is Outcome.TIMEOUT
    assert "timed out" in result.error
    assert result.stdout.startswith("started\n.")
    assert not alive(result.pid)  # the leader is reaped before run_process returns
    await assert_all_dead(result.pid, int(pid_file.read_text()))


async def test_idle_watchdog_kills_the_whole_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    result = await run_process(
        spawner(pid_file, SILENT_TAIL),
        cwd=tmp_path,
        limits=ProcessLimits(timeout=30, idle_timeout=SILENCE, kill_grace=0.2),
    )
    # The silence ended it, not the wall clock (30 s): our SIGTERM killed the leader,
    # after the one line it wrote, and its grandchild went with the group.
    assert result.outcome is Outcome.IDLE_TIMEOUT
    assert f"no output for {SILENCE:g}s" in result.error
    assert result.exit_code == -signal.SIGTERM
    assert result.stdout == "started\n"
    await assert_all_dead(result.pid, int(pid_file.read_text()))


async def test_sigterm_ignored_means_sigkill_after_the_grace(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    result = await run_process(
        spawner(pid_file, SILENT_TAIL, "ignore"),
        cwd=tmp_path,
        limits=ProcessLimits(timeout=30, idle_timeout=SILENCE, kill_grace=0.3),
    )
    assert result.outcome is Outcome.IDLE_TIMEOUT
    # SIGTERM came first (the leader noted it and carried on), then SIGKILL ended it.
    assert (tmp_path / "child.pid.term").exists()
    assert result.exit_code == -signal.SIGKILL
    await assert_all_dead(result.pid, int(pid_file.read_text()))


async def test_sigterm_comes_first_so_a_child_can_clean_up(tmp_path: Path) -> None:
    marker = tmp_path / "cleaned-up"
    body = f"""
    import signal, sys, time
    def bye(*_):
        open({str(marker)!r}, "w").write("bye")
        sys.exit(0)
    signal.signal(signal.SIGTERM, bye)
    print("ready", flush=True)
    while True: time.sleep(60)
    """
    result = await run_process(
        script(body), cwd=tmp_path, limits=ProcessLimits(timeout=30, idle_timeout=SILENCE)
    )
    assert result.outcome is Outcome.IDLE_TIMEOUT
    assert marker.read_text() == "bye"


async def test_output_over_the_cap_kills_and_fails_cleanly(tmp_path: Path) -> None:
    result = await run_process(
        script(
            "import sys\nwhile True: sys.stdout.write('y' * 65536)",
        ),
        cwd=tmp_path,
        limits=ProcessLimits(timeout=30, output_cap=1_000_000, kill_grace=0.2),
    )
    assert result.outcome is Outcome.OUTPUT_CAP
    assert len(result.stdout) == 1_000_000
    assert "1000000 bytes" in result.error
    assert not alive(result.pid)


async def test_a_single_multi_megabyte_line_is_not_fatal(tmp_path: Path) -> None:
    size = 6 * 1024 * 1024
    result = await run_process(
        script(f"import sys; sys.stdout.write('{{\"t\": \"' + 'z' * {size} + '\"}}\\n')"),
        cwd=tmp_path,
        limits=ProcessLimits(timeout=30),
    )
    assert result.outcome is Outcome.OK
    assert len(result.stdout) == size + len('{"t": ""}\n')


async def test_missing_binary_names_the_binary(tmp_path: Path) -> None:
    result = await run_process(["no-such-agent-cli-xyz", "exec"], cwd=tmp_path)
    assert result.outcome is Outcome.NOT_FOUND
    assert result.error == "binary not found: no-such-agent-cli-xyz"
    absent = str(tmp_path / "bin" / "codex")
    result = await run_process([absent], cwd=tmp_path)
    assert result.outcome is Outcome.NOT_FOUND
    assert absent in result.error


async def test_missing_cwd_is_the_callers_error(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="does not exist"):
        await run_process([PY, "-c", "pass"], cwd=tmp_path / "nope")


async def test_environment_is_explicit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_SECRET_TOKEN", "must-not-leak")
    result = await run_process(
        script("import json, os; print(json.dumps(dict(os.environ)))"),
        cwd=tmp_path,
        extra_env={"ONLY_FOR_THIS_CHILD": "yes"},
    )
    env = json.loads(result.stdout)
    assert env["ONLY_FOR_THIS_CHILD"] == "yes"
    assert "SERVICE_SECRET_TOKEN" not in env
    assert "PATH" in env
    assert "ONLY_FOR_THIS_CHILD" not in os.environ

    result = await run_process(
        script("import json, os; print(json.dumps(dict(os.environ)))"),
        cwd=tmp_path,
        base_env={"PATH": os.environ["PATH"]},
    )
    assert set(json.loads(result.stdout)) <= {"PATH", "LC_CTYPE", "PWD"}


async def test_cancelling_the_task_kills_the_group(tmp_path: Path) -> None:
    fifo = tmp_path / "ready.fifo"
    os.mkfifo(fifo)
    body = f"""
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: time.sleep(60)"])
    with open({str(fifo)!r}, "w") as f:
        f.write(f"{{child.pid}} {{__import__('os').getpid()}}")
    while True: time.sleep(60)
    """
    task = asyncio.create_task(
        run_process(script(body), cwd=tmp_path, limits=ProcessLimits(timeout=60))
    )
    # Opening a FIFO for reading blocks until the child opens it for writing: an event.
    ready = await asyncio.to_thread(fifo.read_text)
    grandchild, leader = (int(part) for part in ready.split())
    assert alive(grandchild) and alive(leader)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not alive(leader)
    await assert_all_dead(leader, grandchild)


async def test_strays_left_by_a_finished_leader_are_killed(tmp_path: Path) -> None:
    body = """
    import subprocess, sys
    child = subprocess.Popen(
        [sys.executable, "-c", "import time\\nwhile True: time.sleep(60)"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    print(child.pid)
    """
    result = await run_process(script(body), cwd=tmp_path, limits=ProcessLimits(timeout=10))
    assert result.outcome is Outcome.OK
    await assert_all_dead(result.pid, int(result.stdout))


async def test_unread_stdin_does_not_break_the_run(tmp_path: Path) -> None:
    result = await run_process(
        script("print('ignored my stdin')"),
        cwd=tmp_path,
        stdin="p" * (4 * 1024 * 1024),
        limits=ProcessLimits(timeout=10),
    )
    assert result.outcome is Outcome.OK
    assert result.stdout == "ignored my stdin\n"


async def test_large_stdin_and_output_at_once_do_not_deadlock(tmp_path: Path) -> None:
    size = 3 * 1024 * 1024
    result = await run_process(
        script("import sys\nfor line in sys.stdin: sys.stdout.write(line)"),
        cwd=tmp_path,
        stdin="q" * 1000 + "\n" + ("r" * 999 + "\n") * (size // 1000),
        limits=ProcessLimits(timeout=20),
    )
    assert result.outcome is Outcome.OK
    assert len(result.stdout) == 1001 + 1000 * (size // 1000)


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        ProcessLimits(timeout=0)
    with pytest.raises(ValueError):
        ProcessLimits(idle_timeout=-1)
    with pytest.raises(ValueError):
        ProcessLimits(output_cap=0)


async def test_result_repr_is_short(tmp_path: Path) -> None:
    result = await run_process(script("print('a' * 10000)"), cwd=tmp_path)
    assert "aaaa" not in repr(result)
    assert "10001 chars" in repr(result)


async def test_output_over_the_cap_then_exit_is_still_a_cap_failure(tmp_path: Path) -> None:
    result = await run_process(
        script("import sys; sys.stdout.write('w' * 3_000_000)"),
        cwd=tmp_path,
        limits=ProcessLimits(timeout=30, output_cap=100_000),
    )
    assert result.outcome is Outcome.OUTPUT_CAP
    assert len(result.stdout) == 100_000
