"""What an agent writes into its worktree never steers the bot's own git steps (issue
32): a `.git` link rewritten to a git folder of the agent's (with an fsmonitor command),
a worktree the run deleted, a symlink to a secret. The commit is refused with the reason,
nothing planted runs, and the next run gets a fresh worktree of the branch."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from runners.workspace import WorktreeTampered, commit_all, create_worktree, link_problem
from tests.runners.test_workspace import git, repo, root  # noqa: F401 - fixtures

__all__ = ["repo", "root"]


def plant_git_folder(tree: Path, marker: Path) -> Path:
    """What attempt 8 did: a git folder of the agent's with a command in its config."""
    evil = tree / "evil.git"
    subprocess.run(["git", "init", "-q", "--bare", str(evil)], check=True)
    subprocess.run(
        [
            "git",
            "config",
            "--file",
            str(evil / "config"),
            "core.fsmonitor",
            f"touch {marker}; false",
        ],
        check=True,
    )
    subprocess.run(
        ["git", "config", "--file", str(evil / "config"), "core.bare", "false"], check=True
    )
    (tree / ".git").write_text(f"gitdir: {evil}\n")
    return evil


async def test_a_rewritten_git_link_is_refused_and_its_command_never_runs(
    repo: Path, root: Path
) -> None:
    tree = await create_worktree(repo, root, "card", "main")
    base = git(repo, "rev-parse", "main")
    (tree.path / "work.txt").write_text("work\n")
    marker = root.parent / "fsmonitor-ran"
    plant_git_folder(tree.path, marker)

    with pytest.raises(WorktreeTampered, match=r"\.git link was changed"):
        await commit_all(tree, "Work")
    assert not marker.exists()
    assert git(repo, "rev-parse", "card/card") == base  # nothing committed

    # The way on: the next run's worktree is made anew from the branch; the planted
    # folder and the uncommitted work are gone, and committing works again.
    again = await create_worktree(repo, root, "card", "main")
    assert link_problem(again) is None
    assert not (again.path / "evil.git").exists() and not (again.path / "work.txt").exists()
    (again.path / "work.txt").write_text("work\n")
    commit = await commit_all(again, "Work")
    assert git(repo, "rev-parse", "card/card") == commit
    assert not marker.exists()


async def test_a_git_link_replaced_by_a_symlink_is_refused(repo: Path, root: Path) -> None:
    tree = await create_worktree(repo, root, "linked", "main")
    link = tree.path / ".git"
    target = link.read_text()
    link.unlink()
    (tree.path / "elsewhere").write_text(target)
    link.symlink_to(tree.path / "elsewhere")
    (tree.path / "x.txt").write_text("x")
    with pytest.raises(WorktreeTampered, match="no longer the link file"):
        await commit_all(tree, "X")


async def test_a_worktree_the_run_deleted_is_refused_then_made_anew(repo: Path, root: Path) -> None:
    tree = await create_worktree(repo, root, "gone", "main")
    subprocess.run(["rm", "-rf", str(tree.path)], check=True)
    with pytest.raises(WorktreeTampered, match="folder is gone"):
        await commit_all(tree, "Nothing")
    again = await create_worktree(repo, root, "gone", "main")
    (again.path / "y.txt").write_text("y")
    commit = await commit_all(again, "Y")
    assert git(repo, "rev-parse", "card/gone") == commit


async def test_a_symlink_to_a_secret_is_committed_as_a_link_never_as_its_content(
    repo: Path, root: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "xmpp.pass"
    secret.write_text("hunter2-very-secret\n")
    tree = await create_worktree(repo, root, "sym", "main")
    (tree.path / "leak").symlink_to(secret)
    commit = await commit_all(tree, "Add a link")
    blob = git(repo, "show", f"{commit}:leak")
    assert blob == str(secret)
    assert "hunter2" not in git(repo, "show", commit)


async def test_a_refused_change_leaves_nothing_in_the_object_store(repo: Path, root: Path) -> None:
    from runners.workspace import CommitRefused

    secret = "hunter2-very-secret-value"
    tree = await create_worktree(repo, root, "keyed", "main")
    (tree.path / "settings.ini").write_text(f"key = {secret}\n")
    (tree.path / "shared.txt").write_text(f"base\n{secret}\n")  # a tracked file too

    def refuse(text: str) -> str | None:
        return "holds the secret" if secret in text else None

    with pytest.raises(CommitRefused, match="holds the secret"):
        await commit_all(tree, "Keyed", refuse=refuse)
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout
    assert secret.encode() not in objects
    # Once the agent takes it out, the same worktree commits.
    (tree.path / "settings.ini").write_text("key = from-the-environment\n")
    (tree.path / "shared.txt").write_text("base\n")
    assert await commit_all(tree, "Keyed", refuse=refuse)
