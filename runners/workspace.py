"""Builder workspaces (git worktrees) and the merge step of a deploy, via the git CLI.

Each card builds in its own worktree `<root>/<slug>` on branch `card/<slug>`,
so parallel builders never share an index or a working tree, and the main
checkout is only ever touched by `merge_card`. The workspace root must lie
outside the main checkout: worktrees inside it would show up there as
untracked files.

With a git remote (workers on several hosts, `runners/remote.py`), a worktree is
made from what the remote has of the card's branch, a commit is pushed at once,
and a merge is pushed only over the `main` it was made on.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from runners import profiles, remote, run_files
from runners.git_guard import (
    Worktree,
    admin_folder,
    in_worktree,
    link_problem,
    pending_text,
    rev_in,
    safe_env,
)
from runners.gitcmd import WorkspaceError
from runners.gitcmd import repo_lock as _lock
from runners.gitcmd import resolve as _rev
from runners.gitcmd import run_git as _git
from runners.runtimes.base import clean_detail
from runners.sandbox import Sandbox

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "WorkspaceError",
    "Worktree",
]

log = logging.getLogger(__name__)

COMMIT_RE = re.compile(r"^[0-9a-f]{7,40}$")
BRANCH_PREFIX = "card/"
# Unstages what the pathspec names, leaving the files; quiet when nothing matches.
UNSTAGE = ("-r", "-q", "-f", "--cached", "--ignore-unmatch")
# Beside the worktrees; a slug never starts with a dot, so no card's worktree is one.
AGENT_HOMES = ".agent-homes"
# Worktree bookkeeping and merges go one at a time per repository (`gitcmd.repo_lock`);
# commits inside a worktree only touch that worktree's branch.


class WorktreeTampered(WorkspaceError):
    """The worktree's `.git` link no longer names the folder the bot made for it."""


class CommitRefused(WorkspaceError):
    """The change holds what must not be committed (`commit_all(refuse=...)` said why)."""


class NoChangesError(WorkspaceError):
    """The builder run left nothing to commit."""


class MergeConflictError(WorkspaceError):
    """The card's branch does not merge cleanly; the main checkout was left as it was."""

    def __init__(self, revision: str, paths: tuple[str, ...]) -> None:
        self.revision = revision
        self.paths = paths
        listed = ", ".join(paths) if paths else "(git named no paths)"
        super().__init__(f"merging {revision} conflicts in: {listed}")


@dataclass(frozen=True, slots=True)
class MergeResult:
    commit: str
    fast_forward: bool


def branch_name(slug: str) -> str:
    _check_slug(slug)
    return BRANCH_PREFIX + slug


def agent_home(root: Path, runtime: str) -> Path:
    """The folder a runtime's CLI keeps its state in on this host (`RunRequest.home`):
    under the workspace root, which is this host's own even when the board is shared."""
    return root / AGENT_HOMES / runtime


def _check_slug(slug: str) -> None:
    if not profiles.is_valid_slug(slug):
        raise WorkspaceError(f"invalid card slug: {clean_detail(slug, 80)!r}")


async def _registered_worktrees(repo: Path) -> dict[Path, str | None]:
    """Worktree path -> checked-out branch (None when detached)."""
    git = await _git(repo, "worktree", "list", "--porcelain")
    found: dict[Path, str | None] = {}
    current: Path | None = None
    for line in git.out.splitlines():
        if line.startswith("worktree "):
            # git prints resolved absolute paths; ours are resolved the same way.
            current = Path(line.removeprefix("worktree "))
            found[current] = None
        elif line.startswith("branch ") and current is not None:
            found[current] = line.removeprefix("branch ").removeprefix("refs/heads/")
    return found


def _layout(repo: Path, root: Path, slug: str) -> tuple[Path, Path, str]:
    """(resolved repo, resolved worktree path, branch), refusing a root inside the repo."""
    branch = branch_name(slug)
    repo, root = repo.resolve(), root.resolve()
    if root == repo or repo in root.parents:
        raise WorkspaceError(f"the workspace root {root} must not be inside the repository {repo}")
    return repo, root / slug, branch


def _resolved(path: Path) -> Path:
    return path.resolve()


def _prepare_path(root: Path, path: Path) -> None:
    if path.exists():
        raise WorkspaceError(f"{path} exists but is not a worktree of this repository")
    root.mkdir(parents=True, exist_ok=True)


async def create_worktree(
    repo: Path, root: Path, slug: str, target_branch: str, *, shared: bool = False
) -> Worktree:
    """Create, or reuse, the worktree of a card.

    A new branch starts at `target_branch` as it is now. An existing branch
    `card/<slug>` is reused with its commits (a later iteration or a fixer
    continues where the last run stopped); an existing worktree of that branch
    is returned as it is. With `shared` (a git remote), the remote's `card/<slug>`
    wins over what this clone has: another host may have built on it since. The
    caller holds the card's only job, so a worktree of the branch under another root
    (another worker's on this repository) is idle: it is moved here.
    """
    repo, path, branch = _layout(repo, root, slug)
    async with _lock(repo):
        pushed = await remote.fetch_card_branch(repo, branch) if shared else None
        # Forget worktrees whose directory was deleted by hand, so they are recreated.
        await _git(repo, "worktree", "prune")
        registered = await _registered_worktrees(repo)
        if path not in registered and await _take_over(repo, registered, path, branch):
            registered = await _registered_worktrees(repo)
        if path in registered:
            if registered[path] != branch:
                raise WorkspaceError(f"{path} is a worktree of another branch")
            worktree = Worktree(slug, path, branch, shared, await admin_folder(repo, path))
            problem = link_problem(worktree)
            if problem is None:
                if pushed is not None and await rev_in(worktree, "HEAD") != pushed:
                    await in_worktree(worktree, "reset", "--quiet", "--hard", pushed)
                return worktree
            # An earlier run broke it; its uncommitted changes are the agent's, untrusted:
            # the worktree is made anew from the branch's last commit.
            log.warning("worktree of %s made anew: %s", slug, problem)
            if path.exists() or path.is_symlink():
                await asyncio.to_thread(_remove_tree, path)
            await _git(repo, "worktree", "prune")
        _prepare_path(path.parent, path)
        if pushed is not None:
            await _git(repo, "branch", "--force", branch, pushed)
        if await _rev(repo, f"refs/heads/{branch}") is not None:
            await _git(repo, "worktree", "add", str(path), branch)
        else:
            if await _rev(repo, f"refs/heads/{target_branch}") is None:
                raise WorkspaceError(f"target branch {target_branch!r} does not exist")
            await _git(repo, "worktree", "add", "-b", branch, str(path), target_branch)
        admin = await admin_folder(repo, path)
    log.info("worktree for %s at %s on %s", slug, path, branch)
    return Worktree(slug, path, branch, shared, admin)


async def _take_over(
    repo: Path, registered: dict[Path, str | None], path: Path, branch: str
) -> bool:
    """Move the branch's worktree from wherever it is to `path`; False when it has none.

    git checks a branch out in one worktree only, and a worker that shares this
    repository (workspaces of its own) may have run the card's last job. Moving keeps
    the uncommitted work a later iteration goes on with, as on one worker.
    """
    elsewhere = next((p for p, b in registered.items() if b == branch), None)
    if elsewhere is None:
        return False
    if elsewhere == repo:
        raise WorkspaceError(
            f"{branch} is checked out in the repository itself ({repo}): "
            "check out another branch there"
        )
    _prepare_path(path.parent, path)
    moved = await _git(repo, "worktree", "move", str(elsewhere), str(path), check=False)
    if moved.code == 0:
        log.info("worktree of %s moved here from %s", branch, elsewhere)
        return True
    # Not movable (another file system): the branch's commits carry the work on; what
    # the last run left uncommitted goes.
    log.warning(
        "worktree of %s at %s made anew here: %s; its uncommitted changes were dropped",
        branch,
        elsewhere,
        clean_detail(moved.err.strip() or moved.out, 200),
    )
    await _git(repo, "worktree", "remove", "--force", str(elsewhere))
    return True


def _remove_tree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    else:
        shutil.rmtree(path)


async def sync_checkout(repo: Path, branch: str) -> None:
    """The main checkout at the remote's `branch` (intents and merges other hosts pushed)."""
    repo = _resolved(repo)
    async with _lock(repo):
        await remote.sync_branch(repo, branch)


async def head(worktree: Worktree) -> str | None:
    return await rev_in(worktree, "HEAD")


async def commit_all(
    worktree: Worktree,
    message: str,
    *,
    author: tuple[str, str] | None = None,
    refuse: Callable[[str], str | None] | None = None,
    run_hooks: bool = False,
    hooks_sandbox: Sandbox | None = None,
) -> str:
    """Commit every change in the worktree; returns the new commit hash.

    `author` (name, email) is for hosts without a git identity; otherwise git's
    own configuration decides. `refuse(staged diff)` may say why the change must not
    be committed (it holds a secret): then nothing is committed, the change is left
    unstaged in the worktree, and `CommitRefused` carries the reason. With `run_hooks`
    the repository's commit hooks run (inside `hooks_sandbox` when given); without,
    none runs.
    """
    if not message.strip():
        raise WorkspaceError("empty commit message")
    problem = link_problem(worktree)
    if problem:
        raise WorktreeTampered(f"not committed: {problem}")
    if refuse is not None:
        # Read before `git add`: a refused change must not leave its content in the
        # repository's object store either.
        reason = refuse(await pending_text(worktree, run_files.PATHSPEC))
        if reason:
            raise CommitRefused(reason)
    await in_worktree(worktree, "add", "--all")
    # The files the owner sent for the run are never part of the change, whatever the
    # agent did to have git take them (`git add -f`, a .gitignore that un-ignores them).
    # Taken out after `add`: an exclude pathspec fails `add` when the folder is ignored.
    await in_worktree(worktree, "rm", *UNSTAGE, "--", run_files.FOLDER_PATHSPEC)
    staged = await in_worktree(worktree, "diff", "--cached", "--quiet", check=False)
    if staged.code == 0:
        raise NoChangesError(f"the run left no changes to commit in {worktree.branch}")
    identity: list[str] = []
    if author is not None:
        identity = ["-c", f"user.name={author[0]}", "-c", f"user.email={author[1]}"]
    # The message goes through stdin: it comes from a model and may be long or start with "-".
    if not run_hooks:
        await in_worktree(
            worktree, *identity, "commit", "--quiet", "--no-verify", "--file=-", stdin=message
        )
    else:
        await _git(
            worktree.path,
            "-c",
            "core.fsmonitor=false",
            *identity,
            "commit",
            "--quiet",
            "--file=-",
            stdin=message,
            env=safe_env(worktree),
            sandbox=hooks_sandbox,
        )
    commit = await rev_in(worktree, "HEAD")
    if commit is None:
        raise WorkspaceError("commit did not produce a HEAD")
    if worktree.remote:
        # The next job of this card may run on another host: it starts from the remote.
        await remote.push_branch(worktree.path, worktree.branch)
    return commit


async def remove_worktree(
    repo: Path, root: Path, slug: str, *, delete_branch: bool = False
) -> None:
    """Remove a card's worktree (uncommitted changes are discarded); keep the branch by
    default. Its worktree under another root (another worker's) goes too."""
    repo, path, branch = _layout(repo, root, slug)
    async with _lock(repo):
        registered = await _registered_worktrees(repo)
        for found in (p for p, b in registered.items() if p == path or (b == branch and p != repo)):
            await _git(repo, "worktree", "remove", "--force", str(found))
        await _git(repo, "worktree", "prune")
        if delete_branch and await _rev(repo, f"refs/heads/{branch}") is not None:
            await _git(repo, "branch", "-D", branch)


async def _conflicting_paths(repo: Path) -> tuple[str, ...]:
    git = await _git(repo, "diff", "--name-only", "--diff-filter=U", check=False)
    return tuple(sorted(line for line in git.out.splitlines() if line.strip()))


async def merge_card(
    repo: Path,
    target_branch: str,
    *,
    slug: str | None = None,
    commit: str | None = None,
    message: str | None = None,
    shared: bool = False,
) -> MergeResult:
    """Merge `card/<slug>` or an exact commit into `target_branch` in the main checkout.

    Fast-forward when possible, else a merge commit. The checkout must be on
    `target_branch` with no uncommitted changes to tracked files: the merge
    never switches branches or mixes with someone's work in progress. On a
    conflict the merge is aborted and `MergeConflictError` names the paths.
    """
    if (slug is None) == (commit is None):
        raise WorkspaceError("merge needs exactly one of slug or commit")
    if commit is not None and not COMMIT_RE.fullmatch(commit):
        raise WorkspaceError(f"invalid commit hash: {clean_detail(commit, 80)!r}")
    revision = branch_name(slug) if slug is not None else str(commit)
    repo = _resolved(repo)
    async with _lock(repo):
        head_ref = await _git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        if head_ref.out.strip() != target_branch:
            raise WorkspaceError(
                f"the main checkout is on {head_ref.out.strip() or 'a detached HEAD'}, "
                f"not on {target_branch}"
            )
        dirty = await _git(repo, "status", "--porcelain", "--untracked-files=no")
        if dirty.out.strip():
            raise WorkspaceError("the main checkout has uncommitted changes; not merging")
        if shared:
            await remote.sync_branch(repo, target_branch)
            if slug is not None:
                await remote.fetch_card_branch(repo, revision)
            else:
                await remote.fetch_commit(repo, f"{BRANCH_PREFIX}*", str(commit))
        wanted = await _rev(repo, revision)
        if wanted is None:
            raise WorkspaceError(f"nothing to merge: {revision} does not exist")
        before = await _rev(repo, "HEAD")
        merge = await _git(
            repo,
            "merge",
            "--no-edit",
            "--no-stat",
            "-m",
            message or f"Merge {revision}",
            wanted,
            check=False,
        )
        if merge.code != 0:
            paths = await _conflicting_paths(repo)
            await _git(repo, "merge", "--abort", check=False)
            after = await _rev(repo, "HEAD")
            if after != before:
                raise WorkspaceError(f"merge of {revision} failed and HEAD moved; check {repo}")
            if paths:
                raise MergeConflictError(revision, paths)
            raise WorkspaceError(
                clean_detail(f"merging {revision} failed: {merge.err.strip() or merge.out}")
            )
        head = await _rev(repo, "HEAD")
        if shared and head is not None and before is not None and head != before:
            await remote.push_merge(repo, target_branch, before)
    if head is None:
        raise WorkspaceError("merge left no HEAD")
    log.info("merged %s into %s at %s", revision, target_branch, head)
    return MergeResult(commit=head, fast_forward=head == wanted and before != wanted)
