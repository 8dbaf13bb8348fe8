"""The bot's own git steps in a worktree an agent wrote (issue 32): they read nothing the
agent could have planted. No hooks, no fsmonitor command, and the git folder named from
the repository's side (`GIT_DIR`), never found through the worktree's `.git` link,
which the agent could point at a folder of its own; that link is checked before a
commit. What a commit would add is read before `git add`, so that a refused change
leaves nothing in the object store."""

from __future__ import annotations

import asyncio
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from runners.gitcmd import GitResult, WorkspaceError
from runners.gitcmd import run_git as _git
from runners.runtimes.base import clean_detail


@dataclass(frozen=True, slots=True)
class Worktree:
    slug: str
    path: Path
    branch: str
    # Commits are pushed to the remote at once (workers on several hosts).
    remote: bool = False
    #: The worktree's own git folder in the repository (`.git/worktrees/<slug>`), found
    #: from the repository's side: the bot's git steps use it, never the `.git` link
    #: in the worktree, which the agent could rewrite.
    admin: Path | None = None


# The bot's own git steps in a worktree read nothing an agent could have planted: no
# hooks, no fsmonitor command, and the git folder given, not found through `.git`.
SAFE_OPTIONS = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")


def safe_env(worktree: Worktree) -> dict[str, str] | None:
    if worktree.admin is None:
        return None
    return {"GIT_DIR": str(worktree.admin), "GIT_WORK_TREE": str(worktree.path)}


async def in_worktree(worktree: Worktree, *args: str, **options: object) -> GitResult:
    return await _git(
        worktree.path,
        *SAFE_OPTIONS,
        *args,
        env=safe_env(worktree),
        # The caller's keywords are _git's own (check, timeout, ...), passed through.
        **options,  # type: ignore[arg-type]
    )


async def admin_folder(repo: Path, path: Path) -> Path:
    """The git folder the repository keeps for the worktree at `path`, checked from the
    repository's side (it names `path` back)."""
    common = (await _git(repo, *SAFE_OPTIONS, "rev-parse", "--absolute-git-dir")).out.strip()
    admin = Path(common) / "worktrees" / path.name
    try:
        back = (admin / "gitdir").read_text(encoding="utf-8").strip()
    except OSError:
        raise WorkspaceError(
            f"the repository keeps no git folder for the worktree {path}"
        ) from None
    if Path(back) != path / ".git":
        raise WorkspaceError(f"the repository's git folder {admin} belongs to {back}, not {path}")
    return admin


def link_problem(worktree: Worktree) -> str | None:
    """Why the worktree's `.git` link is not the one the bot made, or None."""
    link = worktree.path / ".git"
    if not worktree.path.is_dir():
        return "the worktree folder is gone (the run deleted it)"
    if link.is_symlink() or not link.is_file():
        return "its .git is no longer the link file git made (replaced by the run)"
    try:
        text = link.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return "its .git link cannot be read"
    if worktree.admin is not None and text != f"gitdir: {worktree.admin}":
        return f"its .git link was changed by the run (it names {clean_detail(text, 120)!r})"
    return None


# What `_pending_text` reads of one new file at most: the refusal looks for short values.
MAX_NEW_FILE_BYTES = 16 * 1024 * 1024


async def pending_text(worktree: Worktree, *left_out: str) -> str:
    """What a commit of everything would add, as text: the changes to tracked files and
    the new files' content (a link's target, never the file it names); `left_out` are
    pathspecs of what the commit leaves out (`:(top,exclude)...`)."""
    paths = ("--", ":/", *left_out) if left_out else ()
    diff = await in_worktree(
        worktree, "diff", "HEAD", "--text", "--no-ext-diff", "--no-textconv", "--no-color", *paths
    )
    listed = await in_worktree(worktree, "ls-files", "--others", "--exclude-standard", "-z", *paths)
    names = [name for name in listed.out.split("\0") if name]
    contents = await asyncio.to_thread(_read_new_files, worktree.path, names)
    return "\n".join([diff.out, *names, *contents])


def _read_new_files(root: Path, names: list[str]) -> list[str]:
    found = []
    for name in names:
        path = root / name
        try:
            if path.is_symlink():
                found.append(os.readlink(path))
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as handle:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                found.append(handle.read(MAX_NEW_FILE_BYTES).decode("utf-8", "replace"))
    return found


async def rev_in(worktree: Worktree, revision: str) -> str | None:
    git = await in_worktree(
        worktree, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", check=False
    )
    return git.out.strip() if git.code == 0 else None
