"""Builder worktrees and the deploy merge, in a real temporary git repository."""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from runners.workspace import (
    MergeConflictError,
    NoChangesError,
    WorkspaceError,
    commit_all,
    create_worktree,
    merge_card,
    remove_worktree,
)

IDENTITY = ("Board Test", "board@test.invalid")


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME=IDENTITY[0],
        GIT_AUTHOR_EMAIL=IDENTITY[1],
        GIT_COMMITTER_NAME=IDENTITY[0],
        GIT_COMMITTER_EMAIL=IDENTITY[1],
    )
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def commit_file(repo: Path, name: str, content: str, message: str) -> str:
    (repo / name).write_text(content)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", IDENTITY[0])
    git(path, "config", "user.email", IDENTITY[1])
    commit_file(path, "shared.txt", "base\n", "initial")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "worktrees"


def exists(path: Path) -> bool:
    return path.exists()


def status(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all")


async def test_builder_change_is_committed_in_its_own_worktree(repo: Path, root: Path) -> None:
    main_head = git(repo, "rev-parse", "HEAD")
    tree = await create_worktree(repo, root, "add-login", "main")
    assert tree.path == (root / "add-login").resolve()
    assert tree.branch == "card/add-login"
    assert git(tree.path, "rev-parse", "HEAD") == main_head

    (tree.path / "login.py").write_text("def login(): ...\n")
    (tree.path / "shared.txt").write_text("base\nchanged by builder\n")
    commit = await commit_all(tree, "Add login\n\nBody from the model marker.")
    assert git(repo, "rev-parse", "card/add-login") == commit
    assert git(repo, "log", "-1", "--format=%s", commit) == "Add login"
    assert git(repo, "show", "--name-only", "--format=", commit).split() == [
        "login.py",
        "shared.txt",
    ]
    # the main checkout saw nothing of it
    assert git(repo, "rev-parse", "HEAD") == main_head
    assert status(repo) == ""
    assert not (repo / "login.py").exists()


async def test_a_run_without_changes_is_a_clear_error(repo: Path, root: Path) -> None:
    tree = await create_worktree(repo, root, "nothing", "main")
    with pytest.raises(NoChangesError, match="no changes"):
        await commit_all(tree, "Nothing")


async def test_commit_with_an_explicit_identity_and_a_dash_message(repo: Path, root: Path) -> None:
    git(repo, "config", "--unset", "user.name")
    tree = await create_worktree(repo, root, "ident", "main")
    (tree.path / "a.txt").write_text("a")
    commit = await commit_all(tree, "--amend is just text here", author=IDENTITY)
    assert (
        git(repo, "log", "-1", "--format=%an|%s", commit) == "Board Test|--amend is just text here"
    )


async def test_worktree_is_reused_and_keeps_its_commits(repo: Path, root: Path) -> None:
    tree = await create_worktree(repo, root, "iterate", "main")
    (tree.path / "step1.txt").write_text("1")
    first = await commit_all(tree, "Step 1")
    again = await create_worktree(repo, root, "iterate", "main")
    assert again == tree
    assert git(again.path, "rev-parse", "HEAD") == first

    # removed worktree, kept branch: the next run continues on the branch
    await remove_worktree(repo, root, "iterate")
    assert not tree.path.exists()
    assert git(repo, "rev-parse", "card/iterate") == first
    revived = await create_worktree(repo, root, "iterate", "main")
    assert git(revived.path, "rev-parse", "HEAD") == first
    await remove_worktree(repo, root, "iterate", delete_branch=True)
    assert "card/iterate" not in git(repo, "branch", "--list")


async def test_new_branch_starts_from_the_target_as_it_is_now(repo: Path, root: Path) -> None:
    await create_worktree(repo, root, "early", "main")
    newer = commit_file(repo, "later.txt", "later\n", "main moved on")
    late = await create_worktree(repo, root, "late", "main")
    assert git(late.path, "rev-parse", "HEAD") == newer
    assert git(repo, "merge-base", "card/early", "main") != newer


async def test_two_cards_in_parallel_do_not_touch_each_other(repo: Path, root: Path) -> None:
    one, two = await asyncio.gather(
        create_worktree(repo, root, "card-one", "main"),
        create_worktree(repo, root, "card-two", "main"),
    )
    (one.path / "one.txt").write_text("1")
    (two.path / "two.txt").write_text("2")
    (two.path / "shared.txt").write_text("two's version\n")
    c1, c2 = await asyncio.gather(commit_all(one, "One"), commit_all(two, "Two"))
    assert git(repo, "show", "--name-only", "--format=", c1).split() == ["one.txt"]
    assert git(repo, "show", "--name-only", "--format=", c2).split() == ["shared.txt", "two.txt"]
    assert not (one.path / "two.txt").exists()
    assert (one.path / "shared.txt").read_text() == "base\n"
    assert status(one.path) == "" and status(two.path) == ""
    assert status(repo) == ""
    assert (repo / "shared.txt").read_text() == "base\n"


@pytest.mark.parametrize("slug", ["../escape", "Upper", "-rf", "a/b", "", "x" * 70])
async def test_invalid_slugs_never_reach_a_path_or_branch(
    repo: Path, root: Path, slug: str
) -> None:
    with pytest.raises(WorkspaceError, match="invalid card slug"):
        await create_worktree(repo, root, slug, "main")
    with pytest.raises(WorkspaceError, match="invalid card slug"):
        await merge_card(repo, "main", slug=slug)
    assert not exists(root)
    assert git(repo, "branch", "--list") == "* main"


async def test_workspace_root_inside_the_repository_is_refused(repo: Path) -> None:
    with pytest.raises(WorkspaceError, match="must not be inside"):
        await create_worktree(repo, repo / ".worktrees", "a", "main")


async def test_missing_target_branch(repo: Path, root: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        await create_worktree(repo, root, "a", "develop")


async def test_merge_fast_forwards_when_possible(repo: Path, root: Path) -> None:
    tree = await create_worktree(repo, root, "ff", "main")
    (tree.path / "new.txt").write_text("new\n")
    commit = await commit_all(tree, "New file")
    result = await merge_card(repo, "main", slug="ff")
    assert result.fast_forward
    assert result.commit == commit == git(repo, "rev-parse", "HEAD")
    assert (repo / "new.txt").read_text() == "new\n"


async def test_merge_commit_when_main_moved_on(repo: Path, root: Path) -> None:
    tree = await create_worktree(repo, root, "mc", "main")
    (tree.path / "feature.txt").write_text("feature\n")
    commit = await commit_all(tree, "Feature")
    other = commit_file(repo, "hotfix.txt", "fix\n", "Hotfix on main")
    result = await merge_card(repo, "main", commit=commit, message="Deploy mc")
    assert not result.fast_forward
    assert result.commit == git(repo, "rev-parse", "HEAD")
    parents = git(repo, "log", "-1", "--format=%P").split()
    assert parents == [other, commit]
    assert git(repo, "log", "-1", "--format=%s") == "Deploy mc"
    assert (repo / "feature.txt").exists() and (repo / "hotfix.txt").exists()


async def test_conflict_names_paths_and_leaves_main_unchanged(repo: Path, root: Path) -> None:
    tree = await create_worktree(repo, root, "clash", "main")
    (tree.path / "shared.txt").write_text("card's line\n")
    (tree.path / "only-card.txt").write_text("x\n")
    await commit_all(tree, "Card edit")
    head = commit_file(repo, "shared.txt", "main's line\n", "Main edit")

    with pytest.raises(MergeConflictError) as caught:
        await merge_card(repo, "main", slug="clash")
    assert caught.value.paths == ("shared.txt",)
    assert "shared.txt" in str(caught.value)
    assert git(repo, "rev-parse", "HEAD") == head
    assert status(repo) == ""
    assert (repo / "shared.txt").read_text() == "main's line\n"
    assert not (repo / "only-card.txt").exists()
    assert not (repo / ".git" / "MERGE_HEAD").exists()


async def test_merge_refuses_a_dirty_or_wrong_checkout(repo: Path, root: Path) -> None:
    tree = await create_worktree(repo, root, "m", "main")
    (tree.path / "m.txt").write_text("m")
    await commit_all(tree, "M")
    (repo / "shared.txt").write_text("work in progress\n")
    with pytest.raises(WorkspaceError, match="uncommitted"):
        await merge_card(repo, "main", slug="m")
    assert (repo / "shared.txt").read_text() == "work in progress\n"
    git(repo, "checkout", "-q", "--", "shared.txt")
    git(repo, "checkout", "-q", "-b", "elsewhere")
    with pytest.raises(WorkspaceError, match="not on main"):
        await merge_card(repo, "main", slug="m")


async def test_merge_arguments_are_checked(repo: Path) -> None:
    with pytest.raises(WorkspaceError, match="exactly one"):
        await merge_card(repo, "main")
    with pytest.raises(WorkspaceError, match="invalid commit"):
        await merge_card(repo, "main", commit="HEAD~1")
    with pytest.raises(WorkspaceError, match="does not exist"):
        await merge_card(repo, "main", slug="never-built")


async def test_a_worktree_deleted_by_hand_is_recreated(repo: Path, root: Path) -> None:
    tree = await create_worktree(repo, root, "gone", "main")
    (tree.path / "g.txt").write_text("g")
    commit = await commit_all(tree, "G")
    shutil.rmtree(tree.path)
    again = await create_worktree(repo, root, "gone", "main")
    assert git(again.path, "rev-parse", "HEAD") == commit


async def test_the_bots_commit_runs_no_repository_hook_and_ignores_an_inherited_git_dir(
    repo: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hook is code anyone who could write the repository's .git planted (an agent run
    # without a sandbox): the bot's own commit runs none (issue 32).
    monkeypatch.setenv("GIT_DIR", "/somewhere/else")  # must not redirect git either
    seen = root.parent / "hook-ran.txt"
    for name in ("pre-commit", "commit-msg", "post-commit"):
        hook = repo / ".git" / "hooks" / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {seen}\n")
        hook.chmod(0o755)
    tree = await create_worktree(repo, root, "hooked", "main")
    (tree.path / "h.txt").write_text("h")
    commit = await commit_all(tree, "H")
    assert not seen.exists(), seen.read_text()
    assert git(tree.path, "rev-parse", "card/hooked") == commit


async def test_another_roots_worktree_of_the_card_moves_here_with_its_work(
    repo: Path, tmp_path: Path
) -> None:
    # Issue 34: two workers share this repository, each with workspaces of its own.
    # git checks a branch out once; whoever runs the card's job takes its worktree.
    theirs = await create_worktree(repo, tmp_path / "a", "shared", "main")
    (theirs.path / "wip.txt").write_text("unfinished\n")
    ours = await create_worktree(repo, tmp_path / "b", "shared", "main")
    assert ours.path == (tmp_path / "b" / "shared").resolve()
    assert (ours.path / "wip.txt").read_text() == "unfinished\n"
    assert not theirs.path.exists()
    commit = await commit_all(ours, "Finish")
    assert git(repo, "show", f"{commit}:wip.txt") == "unfinished"
    # And back: the other worker's next job of the card takes it again.
    again = await create_worktree(repo, tmp_path / "a", "shared", "main")
    assert again.path == theirs.path and not ours.path.exists()
    # Done with the card: its worktree goes, whichever root it is under now.
    await remove_worktree(repo, tmp_path / "b", "shared")
    assert not again.path.exists()
    assert "shared" not in git(repo, "worktree", "list")


async def test_a_worktree_on_another_file_system_is_made_anew(repo: Path, tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("needs /dev/shm on a file system of its own")
    theirs = await create_worktree(repo, tmp_path / "a", "far", "main")
    (theirs.path / "f.txt").write_text("f")
    commit = await commit_all(theirs, "F")
    (theirs.path / "wip.txt").write_text("uncommitted\n")
    other = Path(tempfile.mkdtemp(dir=shm))
    try:
        ours = await create_worktree(repo, other, "far", "main")
        assert git(ours.path, "rev-parse", "HEAD") == commit
        assert not (ours.path / "wip.txt").exists() and not theirs.path.exists()
    finally:
        shutil.rmtree(other)


async def test_the_branch_checked_out_in_the_repository_itself_is_named(
    repo: Path, root: Path
) -> None:
    git(repo, "checkout", "-q", "-b", "card/by-hand")
    with pytest.raises(WorkspaceError, match=r"card/by-hand is checked out in the repository"):
        await create_worktree(repo, root, "by-hand", "main")


async def test_another_process_in_a_git_step_on_the_repository_is_waited_for(
    repo: Path, root: Path
) -> None:
    # Another worker process on this repository holds its lock (flock on the folder;
    # a second open file is as good as another process).
    fd = os.open(repo, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        making = asyncio.create_task(create_worktree(repo, root, "waits", "main"))
        done, _ = await asyncio.wait({making}, timeout=1.0)
        assert not done and not (root / "waits").exists()
    finally:
        os.close(fd)
    tree = await making
    assert tree.path.is_dir()
