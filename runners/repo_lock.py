"""One git bookkeeping step at a time per repository, in this process and across processes.

Worktree bookkeeping and merges change shared refs and `.git/worktrees`. Workers in
several processes on one host may name the same local repository (each with its own
workspaces): an asyncio lock orders this process's steps, an advisory lock on the
repository folder orders the processes'. The kernel drops the latter when a process
dies, even by SIGKILL, so a crash never leaves a stale lock behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import weakref
from collections.abc import AsyncIterator
from pathlib import Path

from runners.gitcmd import WorkspaceError

# Locks belong to an event loop, so they are kept per loop.
_repo_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


@contextlib.asynccontextmanager
async def repo_lock(repo: Path) -> AsyncIterator[None]:
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
