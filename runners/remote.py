"""A repository shared through a git remote: for workers on several hosts.

Each process keeps its own clone (`origin` is the remote). Work moves between
hosts only through the remote: a builder pushes `card/<slug>`; whoever runs the
next job of that card (a reviewer, a fixer, on any host) fetches that branch and
continues from exactly what was pushed; a deploy merges into `main` and pushes it,
and refuses when `main` moved on the remote meanwhile (the merge was made on a
`main` that is no longer the remote's: it must be redone, not forced).
"""

from __future__ import annotations

import logging
from pathlib import Path

from runners.gitcmd import WorkspaceError
from runners.gitcmd import resolve as _rev
from runners.gitcmd import run_git as _git

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "WorkspaceError",
]

log = logging.getLogger(__name__)


class RemoteMovedError(WorkspaceError):
    """The remote's branch moved while we merged; nothing was pushed."""


async def ensure_clone(remote: str, checkout: Path) -> None:
    """Clone `remote` into `checkout` once; later starts only fetch."""
    if (checkout / ".git").exists():
        await _git(checkout, "fetch", "--quiet", "--prune", "origin")
        return
    checkout.parent.mkdir(parents=True, exist_ok=True)
    await _git(checkout.parent, "clone", "--quiet", remote, str(checkout))
    log.info("cloned %s into %s", remote, checkout)


async def sync_branch(checkout: Path, branch: str) -> None:
    """Bring the checked-out `branch` up to the remote's (new intents, other merges).

    Only a fast-forward of a clean checkout: local commits that never reached the
    remote (a merge whose push was refused) are dropped, since the remote is the truth.
    """
    await _git(checkout, "fetch", "--quiet", "origin", branch)
    wanted = await _rev(checkout, f"refs/remotes/origin/{branch}")
    if wanted is None:
        return
    head = await _git(checkout, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    if head.out.strip() != branch:
        await _git(checkout, "branch", "--force", branch, wanted)
        return
    if await _rev(checkout, "HEAD") != wanted:
        # Tracked files only: reports the bot wrote beside them (untracked) stay.
        await _git(checkout, "reset", "--quiet", "--hard", wanted)


async def fetch_card_branch(checkout: Path, branch: str) -> str | None:
    """The remote's commit of `card/<slug>`, fetched; None when it was never pushed."""
    ref = f"refs/remotes/origin/{branch}"
    fetched = await _git(
        checkout, "fetch", "--quiet", "origin", f"+refs/heads/{branch}:{ref}", check=False
    )
    if fetched.code != 0:
        if "couldn't find remote ref" in fetched.err.lower():
            return None
        raise WorkspaceError(f"git fetch {branch} failed: {fetched.err.strip()}")
    return await _rev(checkout, ref)


async def push_branch(cwd: Path, branch: str) -> None:
    """Publish a card's branch. Forced: one job per card runs at a time (the schema
    says so), and that job's worker owns the branch while it runs."""
    await _git(cwd, "push", "--quiet", "origin", f"+refs/heads/{branch}:refs/heads/{branch}")


async def fetch_commit(checkout: Path, branch: str, commit: str) -> None:
    """Make sure `commit` (pushed on `branch`) is here, or say that it is not."""
    if await _rev(checkout, commit) is not None:
        return
    await fetch_card_branch(checkout, branch)
    if await _rev(checkout, commit) is None:
        raise WorkspaceError(f"commit {commit[:12]} is not on the remote's {branch}")


async def push_merge(checkout: Path, branch: str, before: str) -> None:
    """Push the merged `branch`, but only over the remote's `before` (what we merged
    onto); when the remote moved meanwhile, undo the local merge and refuse."""
    pushed = await _git(
        checkout,
        "push",
        "--quiet",
        "--porcelain",
        f"--force-with-lease=refs/heads/{branch}:{before}",
        "origin",
        f"refs/heads/{branch}:refs/heads/{branch}",
        check=False,
    )
    if pushed.code == 0:
        return
    await _git(checkout, "reset", "--quiet", "--hard", before)
    moved = "stale info" in pushed.out + pushed.err or "rejected" in pushed.out + pushed.err
    if moved:
        raise RemoteMovedError(
            f"{branch} moved on the remote during the merge; nothing was pushed "
            "(the merge must be redone on the new one)"
        )
    raise WorkspaceError(f"git push {branch} failed: {(pushed.err or pushed.out).strip()}")
