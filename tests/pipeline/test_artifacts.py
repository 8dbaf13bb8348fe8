"""Artifacts a report offers are read as untrusted: inside the worktree, no link
followed, regular files within the limit, kept by their bytes' type (issue 36)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chatbot.board import BoardService
from chatbot.pipeline import artifacts
from chatbot.store import Store
from runners.contracts.builder import parse_artifacts
from runners.contracts.errors import ContractError
from tests.media.made import png


@pytest.fixture
async def board(tmp_path: Path):
    store = await Store.open(tmp_path / "board.sqlite3")
    yield BoardService(store, tmp_path / "repo")
    await store.close()


async def test_only_regular_files_inside_the_worktree_within_the_limit(
    board: BoardService, tmp_path: Path
) -> None:
    tree = tmp_path / "tree"
    (tree / "shots").mkdir(parents=True)
    (tree / "shots" / "after.png").write_bytes(png())
    secret = tmp_path / "secret.txt"
    secret.write_text("the bot's secret\n")
    os.symlink(secret, tree / "link.txt")
    os.symlink(tmp_path, tree / "out")
    (tree / "big.txt").write_text("x" * 2000)
    (tree / "prog.bin").write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 100)
    (tree / "folder").mkdir()
    offered = await artifacts.keep(
        board,
        tree,
        ["shots/after.png", "link.txt", "out/secret.txt", "big.txt", "prog.bin", "folder", "gone"],
        limit=1000,
        max_pixels=1_000_000,
    )
    assert [item["name"] for item in offered.kept] == ["after.png"]
    assert await board.files.data(int(offered.kept[0]["id"])) == png()  # type: ignore[call-overload]
    why = dict(line.split(": ", 1) for line in offered.skipped)
    assert why["link.txt"] == "a symbolic link, not followed"
    assert why["out/secret.txt"] == "a link or a file where a folder should be, not followed"
    assert why["big.txt"] == "2000 bytes, more than the 1000 allowed"
    assert "executable" in why["prog.bin"].lower()
    assert why["folder"] == "not a regular file"
    assert why["gone"] == "not in the worktree"


@pytest.mark.parametrize(
    "line",
    ["Artifacts: ../x", "Artifacts: /etc/passwd", "Artifacts: .git/config", "Artifacts: a b"],
)
def test_a_report_offering_a_path_outside_plain_relative_ones_is_refused(line: str) -> None:
    with pytest.raises(ContractError):
        parse_artifacts(f"done\n{line}\n")


def test_at_most_five_artifacts() -> None:
    assert parse_artifacts("Artifacts: a.png, b/c.html\n") == ("a.png", "b/c.html")
    with pytest.raises(ContractError, match="at most 5"):
        parse_artifacts("Artifacts: " + ", ".join(f"f{n}.txt" for n in range(6)))
