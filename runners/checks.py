"""The repository's own checks on a commit: one command, no shell, a time limit, a tail.

A builder that breaks the suite must not reach the review unnoticed, so the bot runs
the command the configuration (`[checks] command`) or the intent (`Checks:` line)
names in the commit's worktree, inside the agents' sandbox when there is one. What
comes back is a verdict and the last few KiB of what the command printed: enough for
the agent to see its failure, never megabytes into a prompt or the board.
"""

from __future__ import annotations

import enum
import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runners.process import Outcome, ProcessLimits, default_base_env, run_process
from runners.sandbox import Sandbox, SandboxError, wrap

#: `Checks: none` or `Checks: <command>` on a line of its own in an intent file, at its
#: start and spelled so: a sentence that merely mentions checks is not a command.
_LINE_RE = re.compile(r"^Checks:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
MAX_ARGS = 64
MAX_ARG_CHARS = 1000
# What the command may print before its run is stopped as a flood; only the tail is kept.
OUTPUT_CAP = 32 * 1024 * 1024


class Verdict(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    TIMEOUT = "timeout"
    #: It could not run at all (program missing, sandbox not made): a failure too.
    ERROR = "error"
    #: The owner said to go on without them once (`/retry <slug> --skip-checks`).
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class ChecksResult:
    verdict: Verdict
    duration_s: float
    #: The end of what the command printed (stdout, then stderr), at most `tail` chars.
    tail: str
    exit_code: int | None = None

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASSED

    def record(self, commit: str, command: Sequence[str]) -> dict[str, Any]:
        """What the card keeps of it (its data's `checks`), per commit."""
        return {
            "commit": commit,
            "command": list(command),
            "verdict": self.verdict.value,
            "duration_s": round(self.duration_s, 3),
            "exit_code": self.exit_code,
            "tail": self.tail,
        }


def command_problem(argv: Sequence[str]) -> str | None:
    """Why `argv` cannot be a checks command (shape only), or None."""
    if not argv:
        return "is empty; give the program and its arguments as a list"
    if len(argv) > MAX_ARGS:
        return f"has {len(argv)} arguments; at most {MAX_ARGS}"
    for arg in argv:
        if not isinstance(arg, str) or not arg or len(arg) > MAX_ARG_CHARS:
            return f"every argument must be text of 1 to {MAX_ARG_CHARS} characters"
        if any(ord(ch) < 32 for ch in arg):
            return "an argument holds a control character"
    return None


def program_problem(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None
) -> str | None:
    """Why the program of `argv` cannot be started from `cwd`, or None (`chatbot check`)."""
    if resolve_program(argv[0], cwd, env) is None:
        where = f"in {cwd}" if os.sep in argv[0] else "on the PATH"
        return f"{argv[0]!r} is not an executable file {where}"
    return None


def resolve_program(program: str, cwd: Path, env: Mapping[str, str] | None = None) -> str | None:
    """The absolute path of `program`: a path is taken in `cwd` (the worktree), a bare
    name is looked up on the PATH the command gets."""
    if os.sep in program:
        path = Path(program) if os.path.isabs(program) else cwd / program
        return str(path.absolute()) if path.is_file() and os.access(path, os.X_OK) else None
    env = default_base_env() if env is None else env
    found = shutil.which(program, path=env.get("PATH", os.defpath))
    return os.path.abspath(found) if found else None


def intent_line(body: str) -> tuple[str, list[str] | None] | None:
    """The `Checks:` line of an intent: None without one; ("none", None) to run no
    checks for the card; ("command", argv) for its own command. Raises ValueError
    naming the fix for a line that cannot be used."""
    match = _LINE_RE.search(body)
    if match is None:
        return None
    text = match.group(1).strip("`").strip()
    if text.lower() == "none":
        return ("none", None)
    try:
        argv = shlex.split(text)
    except ValueError as error:
        raise ValueError(f"the intent's Checks: line cannot be read ({error})") from None
    problem = command_problem(argv)
    if problem:
        raise ValueError(f"the intent's Checks: line {problem} (or write 'Checks: none')")
    return ("command", argv)


def _tail(stdout: str, stderr: str, limit: int) -> str:
    text = stdout.rstrip("\n")
    if stderr.strip():
        text = f"{text}\n{stderr.rstrip()}" if text else stderr.rstrip()
    return text[-limit:]


async def run_checks(
    argv: Sequence[str],
    cwd: Path,
    *,
    timeout_s: float,
    tail_chars: int,
    sandbox: Sandbox | None = None,
) -> ChecksResult:
    """Run the checks in `cwd`; never raises for what the command does.

    The environment is the minimal one of every child (no secrets of the bot); inside a
    sandbox the command sees the worktree (writable), the system and what the sandbox
    shows, and no network."""
    env = default_base_env()
    program = resolve_program(argv[0], cwd, env)
    if program is None:
        return ChecksResult(Verdict.ERROR, 0.0, f"{argv[0]}: not an executable file")
    full = [program, *argv[1:]]
    if sandbox is not None:
        try:
            full = wrap(full, cwd, sandbox)
        except SandboxError as error:
            return ChecksResult(Verdict.ERROR, 0.0, f"the sandbox cannot be made: {error}")
    limits = ProcessLimits(
        timeout=timeout_s, idle_timeout=None, output_cap=OUTPUT_CAP, stderr_tail=tail_chars * 4
    )
    result = await run_process(full, cwd=cwd, base_env=env, limits=limits)
    tail = _tail(result.stdout[-tail_chars * 4 :], result.stderr_tail, tail_chars)
    verdict = {
        Outcome.OK: Verdict.PASSED,
        Outcome.EXIT_NONZERO: Verdict.FAILED,
        Outcome.TIMEOUT: Verdict.TIMEOUT,
    }.get(result.outcome, Verdict.ERROR)
    if verdict is Verdict.TIMEOUT:
        tail = f"{tail}\n[stopped after {timeout_s:g} s: the checks' time limit]".lstrip()
    elif verdict is Verdict.ERROR:
        tail = f"{tail}\n[{result.error or result.outcome.value}]".lstrip()
    return ChecksResult(verdict, result.duration, tail[-tail_chars:], result.exit_code)
