"""Files sent for a run (runners/run_files.py): safe names, private modes, a folder git
ignores, and a builder's commit that never takes them, in a real git repository."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from runners import run_files
from runners.run_files import FOLDER, exclude_from_git, place, safe_name
from runners.workspace import WorkspaceError, commit_all, create_worktree
from tests.runners.test_workspace import IDENTITY, git

SHELL_SPECIAL = set(" \t\n\"'`$;&|<>()[]{}*?!~#%^=,@\\")


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("screenshot.png", "screenshot.png"),
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\me\\shot.PNG", "shot.PNG"),
        (".env", "env"),
        ("..", "file"),
        ("", "file"),
        ("-rf .png", "rf.png"),
        ("a b;$(rm -rf x).png", "a_b_rm_-rf_x.png"),
        ("bill,2024@home.pdf", "bill_2024_home.pdf"),
        ("evil\u202egnp.exe", "evil_gnp.exe"),
        ("line\nbreak\x00.txt", "line_break.txt"),
        ("Снимок экрана.png", "Снимок_экрана.png"),
        ("notes.", "notes"),
        ("archive.tar.gz", "archive.tar.gz"),
    ],
)
def test_a_sent_name_becomes_a_plain_file_name(sent: str, kept: str) -> None:
    assert safe_name(sent) == kept


def test_a_long_name_is_cut_within_bounds_keeping_its_extension() -> None:
    name = safe_name("ä" * 300 + ".png")
    assert name.endswith(".png") and name.startswith("ää")
    assert len(name.encode()) <= run_files.MAX_NAME_BYTES
    # A long "extension" is no extension: cut as part of the name.
    assert len(safe_name("x." + "y" * 400).encode()) <= run_files.MAX_NAME_BYTES


def test_placed_files_are_private_uniquely_named_and_absolute(tmp_path: Path) -> None:
    worktree = tmp_path / "tree"
    worktree.mkdir()
    old = os.umask(0o022)
    try:
        first = place(worktree / FOLDER, [("shot.png", b"one"), ("shot.png", b"two")])
        second = place(worktree / FOLDER, [("shot.png", b"three"), ("$(x).txt", b"")])
    finally:
        os.umask(old)
    folder = worktree / FOLDER
    assert [path.name for path in first + second] == [
        "shot.png",
        "shot-2.png",
        "shot-3.png",
        "x.txt",
    ]
    assert all(path.is_absolute() and path.parent == folder for path in first + second)
    assert [path.read_bytes() for path in first + second] == [b"one", b"two", b"three", b""]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {stat.S_IMODE(path.stat().st_mode) for path in first + second} == {0o600}
    for path in first + second:
        assert not SHELL_SPECIAL & set(path.name) and not path.name.startswith((".", "-"))


def test_a_relative_folder_gives_absolute_paths(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    [path] = place(Path(FOLDER), [("a.txt", b"a")])
    assert path == tmp_path / FOLDER / "a.txt"


def test_a_link_planted_by_a_run_is_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("the bot's own\n")
    folder = tmp_path / "tree" / FOLDER
    folder.mkdir(parents=True)
    (folder / "shot.png").symlink_to(outside)

    [placed] = place(folder, [("shot.png", b"picture")])

    assert placed.name == "shot-2.png" and placed.read_bytes() == b"picture"
    assert outside.read_text() == "the bot's own\n"
    # The folder itself a link to elsewhere: refused, nothing written there.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = tmp_path / "other-tree" / FOLDER
    linked.parent.mkdir()
    linked.symlink_to(elsewhere)
    with pytest.raises(WorkspaceError, match="not a folder"):
        place(linked, [("a.txt", b"a")])
    assert list(elsewhere.iterdir()) == []


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("base\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    return path


async def test_the_folder_is_excluded_once_for_every_worktree(repo: Path, tmp_path: Path) -> None:
    tree = await create_worktree(repo, tmp_path / "workspaces", "card-a", "main")
    place(tree.path / FOLDER, [("shot.png", b"picture")])
    assert git(tree.path, "status", "--porcelain") == f"?? {FOLDER}/"

    assert await exclude_from_git(tree) is True
    assert await exclude_from_git(tree.path) is True  # by path too, and only once

    exclude = Path(git(repo, "rev-parse", "--absolute-git-dir")) / "info" / "exclude"
    lines = exclude.read_text().splitlines()
    assert lines.count(f"/{FOLDER}/") == 1
    assert git(tree.path, "status", "--porcelain") == ""
    # The main checkout and the other worktrees ignore it too.
    place(repo / FOLDER, [("notes.txt", b"n")])
    assert git(repo, "status", "--porcelain") == ""


async def test_a_folder_outside_git_is_not_excluded(tmp_path: Path) -> None:
    plain = tmp_path / "planner"
    plain.mkdir()
    assert await exclude_from_git(plain) is False


@pytest.mark.parametrize(
    "agent",
    [
        ["add", "-A"],
        ["add", "."],
        ["add", "-f", FOLDER],
        # A .gitignore of the agent's own that un-ignores the folder.
        "unignore",
    ],
    ids=["add-all", "add-dot", "add-force", "gitignore-negation"],
)
async def test_a_builder_commit_never_takes_the_placed_files(
    repo: Path, tmp_path: Path, agent: list[str] | str
) -> None:
    tree = await create_worktree(repo, tmp_path / "workspaces", "card-b", "main")
    await exclude_from_git(tree)
    placed = place(tree.path / FOLDER, [("shot.png", b"\x89PNG"), ("log.txt", b"SECRET=1\n")])
    # The agent's work, and its own git steps.
    (tree.path / "fix.py").write_text("print('fixed')\n")
    if agent == "unignore":
        (tree.path / ".gitignore").write_text(f"!/{FOLDER}/\n")
        git(tree.path, "add", "-A")
    else:
        git(tree.path, *agent)

    def refuse(text: str) -> str | None:
        # What the commit would add is read without the placed files.
        return "a secret" if "SECRET=" in text else None

    commit = await commit_all(tree, "Fix it", author=IDENTITY, refuse=refuse)

    files = git(tree.path, "ls-tree", "-r", "--name-only", commit).splitlines()
    assert "fix.py" in files
    assert not [name for name in files if name.startswith(FOLDER)]
    # Still there for the next run of the card.
    assert all(path.exists() for path in placed)
    assert FOLDER not in git(tree.path, "diff", "--cached", "--name-only")


async def test_placed_files_an_agent_committed_itself_leave_with_the_builder_commit(
    repo: Path, tmp_path: Path
) -> None:
    tree = await create_worktree(repo, tmp_path / "workspaces", "card-c", "main")
    place(tree.path / FOLDER, [("shot.png", b"\x89PNG")])
    git(tree.path, "add", "-f", FOLDER)
    git(tree.path, "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-q", "-m", "agent's")

    commit = await commit_all(tree, "Builder's", author=IDENTITY)

    assert git(tree.path, "ls-tree", "-r", "--name-only", commit) == "README.md"
    assert (tree.path / FOLDER / "shot.png").exists()


async def test_without_the_exclusion_the_commit_still_leaves_the_folder_out(
    repo: Path, tmp_path: Path
) -> None:
    tree = await create_worktree(repo, tmp_path / "workspaces", "card-d", "main")
    place(tree.path / FOLDER, [("shot.png", b"\x89PNG")])
    (tree.path / "fix.py").write_text("x = 1\n")

    commit = await commit_all(tree, "Fix", author=IDENTITY)

    assert git(tree.path, "ls-tree", "-r", "--name-only", commit).splitlines() == [
        "README.md",
        "fix.py",
    ]
