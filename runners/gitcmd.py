"""Running git for workspaces and remotes: a minimal environment, errors in words.

Git runs with a minimal environment (no `GIT_*` variables, no service secrets): a
`GIT_DIR` inherited from a hook or a shell cannot redirect it to another
repository, and the target repository's hooks see no tokens.

Worktree bookkeeping and merges change shared refs and `.git/worktrees`: `repo_lock`
runs them one at a time per repository. Workers in several processes on one host may
name the same local repository (each with its own workspaces): an asyncio lock orders
this process's steps, an advisory lock on the repository folder orders the
processes'. The kernel drops the latter when a process dies, even by SIGKILL, so a
crash never leaves a stale lock behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from runners.process import Outcome, ProcessLimits, default_base_env, run_process
from runners.runtimes.base import RunnerError, clean_detail
from runners.sandbox import Sandbox, SandboxError, wrap

_GIT_LIMITS = ProcessLimits(timeout=300.0, idle_timeout=None, output_cap=16 * 1024 * 1024)


class WorkspaceError(RunnerError):
    """A git step of a builder workspace or a merge failed."""


def _git_env() -> dict[str, str]:
    # Hooks of the target repository run with this environment: give them no secrets.
    env = default_base_env()
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


@dataclass(frozen=True, slots=True)
class GitResult:
    code: int | None
    out: str
    err: str


async def run_git(
    cwd: Path,
    *args: str,
    stdin: str = "",
    check: bool = True,
    env: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> GitResult:
    """git with `args` in `cwd`; with a `sandbox`, inside it (the repository's hooks)."""
    argv: list[str] = ["git", *args]
    if sandbox is not None:
        binary = shutil.which("git")
        if binary is None:
            raise WorkspaceError("git is not installed (binary not found: git)")
        try:
            argv = wrap([binary, *args], cwd, sandbox)
        except SandboxError as error:
            raise WorkspaceError(f"the sandbox for git cannot be made: {error}") from None
    result = await run_process(
        argv,
        cwd=cwd,
        stdin=stdin,
        base_env=_git_env(),
        extra_env=env,
        limits=_GIT_LIMITS,
    )
    if result.outcome is Outcome.NOT_FOUND:
        raise WorkspaceError("git is not installed (binary not found: git)")
    git = GitResult(result.exit_code, result.stdout, result.stderr_tail)
    if check and result.outcome is not Outcome.OK:
        detail = git.err.strip() or result.error
        raise WorkspaceError(clean_detail(f"git {args[0]} failed: {detail}"))
    return git


async def resolve(cwd: Path, revision: str) -> str | None:
    git = await run_git(
        cwd, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", check=False
    )
    return git.out.strip() if git.code == 0 else None


# Locks belong to an event loop, so they are kept per loop.
_repo_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


@contextlib.asynccontextmanager
async def repo_lock(repo: Path) -> AsyncIterator[None]:
    """One bookkeeping step at a time on `repo`, across this host's processes too."""
    locks = _repo_locks.setdefault(asyncio.get_running_loop(), {})
    async with locks.setdefault(repo, asyncio.Lock()), _across_processes(repo):
        yield


@contextlib.asynccontextmanager
async def _across_processes(repo: Path) -> AsyncIterator[None]:
    try:
        fd = os.open(repo, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise WorkspaceError(f"cannot open the repository {repo}: {error.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        # Another process is in a step: wait for it without holding up the event loop.
        waiting = asyncio.ensure_future(asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX))
        try:
            await asyncio.shield(waiting)
        except BaseException:
            # Closing the file gives the lock up; the thread may still be taking it.
            waiting.add_done_callback(lambda _: os.close(fd))
            raise
    except OSError as error:
        os.close(fd)
        raise WorkspaceError(f"cannot lock the repository {repo}: {error.strerror}") from None
    try:
        yield
    finally:
        os.close(fd)
