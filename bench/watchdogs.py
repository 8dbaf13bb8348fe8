"""How soon runners.process ends a run: after the CLI's exit, a silence, the wall clock.

Each case runs a small Python "CLI" that starts a helper sharing its stdout (as agent
CLIs start shells and dev servers) through `run_process`, --runs times, and prints
how long after the moment that should end the run the result was back (the helper
killed with the group). The tests assert the outcomes and the order of signals
(tests/runners/test_process.py, tests/pipeline/test_failures.py); the times are here.

- exit with a helper: the CLI answers and exits 0, its helper keeps the pipe open;
- idle watchdog: the CLI says one line and then nothing (idle_timeout);
- wall clock: the CLI trickles output past its timeout;
- SIGTERM ignored: idle watchdog, then the kill grace, then SIGKILL;
- cancel: the awaiting task is cancelled (/cancel) while the CLI works.

    .venv/bin/python bench/watchdogs.py [--runs 10] [--idle 0.5] [--grace 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runners.process import Outcome, ProcessLimits, run_process  # noqa: E402

# The CLI: a helper in its group holding stdout, then `tail`; every line it prints
# carries the time it was written, so the last one says when the CLI went quiet.
CLI = """
import os, signal, subprocess, sys, time
if "ignore" in sys.argv[1:]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: time.sleep(60)"])
def say(): print(repr(time.time()), flush=True)
say()
{tail}
"""
TAILS = {
    "exit": "say(); os._exit(0)",
    "silent": "while True: time.sleep(60)",
    "trickle": "while True:\n    say()\n    time.sleep(0.02)",
}


def argv(tail: str, *flags: str) -> list[str]:
    return [sys.executable, "-c", CLI.replace("{tail}", TAILS[tail]), *flags]


def last_said(stdout: str) -> float:
    return float(stdout.strip().splitlines()[-1])


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:7.1f} ms, max {max(values) * 1000:7.1f} ms"


async def after_exit(cwd: Path) -> float:
    result = await run_process(argv("exit"), cwd=cwd, limits=ProcessLimits(timeout=30))
    assert result.outcome is Outcome.OK, result
    return time.time() - last_said(result.stdout)


async def after_silence(cwd: Path, idle: float, grace: float, *flags: str) -> float:
    limits = ProcessLimits(timeout=30, idle_timeout=idle, kill_grace=grace)
    result = await run_process(argv("silent", *flags), cwd=cwd, limits=limits)
    assert result.outcome is Outcome.IDLE_TIMEOUT, result
    waited = idle + (grace if flags else 0.0)
    return time.time() - last_said(result.stdout) - waited


async def after_deadline(cwd: Path, timeout: float) -> float:
    limits = ProcessLimits(timeout=timeout, idle_timeout=5, kill_grace=0.5)
    started = time.time()
    result = await run_process(argv("trickle"), cwd=cwd, limits=limits)
    assert result.outcome is Outcome.TIMEOUT, result
    return time.time() - started - timeout


async def after_cancel(cwd: Path) -> float:
    task = asyncio.ensure_future(
        run_process(argv("trickle"), cwd=cwd, limits=ProcessLimits(timeout=30))
    )
    await asyncio.sleep(0.3)  # the CLI is at work: what a run looks like when /cancel comes
    cancelled = time.time()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return time.time() - cancelled


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-watchdogs-") as folder:
        cwd = Path(folder)
        cases = {
            "CLI exit -> result (helper holds stdout)": lambda: after_exit(cwd),
            f"silence -> result, past idle_timeout {args.idle:g}s": lambda: after_silence(
                cwd, args.idle, args.grace
            ),
            "deadline -> result, past timeout 0.5s": lambda: after_deadline(cwd, 0.5),
            f"SIGTERM ignored: past idle + grace {args.grace:g}s": lambda: after_silence(
                cwd, args.idle, args.grace, "ignore"
            ),
            "cancel -> group killed and reaped": lambda: after_cancel(cwd),
        }
        for name, case in cases.items():
            times = [await case() for _ in range(args.runs)]
            print(f"{name:<48} {ms(times)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--idle", type=float, default=0.5)
    parser.add_argument("--grace", type=float, default=0.5)
    asyncio.run(main(parser.parse_args()))
