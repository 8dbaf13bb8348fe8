"""A repository shared through a git remote (workers on several hosts): real git, a bare
remote in a temporary folder, one clone per "host"."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from runners import remote
from runners.workspace import commit_all, create_worktree, merge_card


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    (seed / "README.md").write_text("hi\n")
    git(seed, "add", "-A")
    git(seed, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "seed")
    git(seed, "push", "-q", str(bare), "main")
    return bare


async def _host(tmp_path: Path, origin: Path, name: str) -> Path:
    checkout = tmp_path / name / "clone"
    await remote.ensure_clone(f"file://{origin}", checkout)
    for key, value in (("user.name", name), ("user.email", f"{name}@x")):
        git(checkout, "config", key, value)
    return checkout


async def test_a_card_built_on_one_host_is_reviewed_and_merged_on_another(
    tmp_path: Path, origin: Path
) -> None:
    a, b = await _host(tmp_path, origin, "a"), await _host(tmp_path, origin, "b")
    built = await create_worktree(a, tmp_path / "a" / "ws", "x", "main", shared=True)
    (built.path / "x.txt").write_text("x\n")
    commit = await commit_all(built, "Add x")  # pushed at once
    assert git(origin, "rev-parse", "refs/heads/card/x") == commit

    # Host b has never seen the card: its worktree starts from what was pushed.
    review = await create_worktree(b, tmp_path / "b" / "ws", "x", "main", shared=True)
    assert git(review.path, "rev-parse", "HEAD") == commit
    merged = await merge_card(b, "main", commit=commit, shared=True)
    assert git(origin, "rev-parse", "refs/heads/main") == merged.commit

    # A later fixer on host a continues from the remote, not from its stale branch.
    await remote.sync_branch(a, "main")
    assert git(a, "rev-parse", "HEAD") == merged.commit


async def test_a_merge_is_refused_when_main_moved_on_the_remote_meanwhile(
    tmp_path: Path, origin: Path
) -> None:
    a, b = await _host(tmp_path, origin, "a"), await _host(tmp_path, origin, "b")
    before = git(a, "rev-parse", "HEAD")
    (a / "merged.txt").write_text("a's merge\n")
    git(a, "add", "-A")
    git(a, "commit", "-q", "-m", "a's merge")  # made on `before`...
    (b / "other.txt").write_text("b\n")
    git(b, "add", "-A")
    git(b, "commit", "-q", "-m", "b's merge")
    git(b, "push", "-q", "origin", "main")  # ...while b pushed a merge of its own

    with pytest.raises(remote.RemoteMovedError, match="moved on the remote"):
        await remote.push_merge(a, "main", before)
    # Nothing of a's merge reached the remote, and a's main is back where it was.
    assert git(origin, "rev-parse", "main") == git(b, "rev-parse", "HEAD")
    assert git(a, "rev-parse", "HEAD") == before
    assert not (a / "merged.txt").exists()
