from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.board import BoardService
from chatbot.store import Store


@pytest.fixture
async def store(tmp_path: Path):
    opened = await Store.open(tmp_path / "board.sqlite3")
    yield opened
    await opened.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "docs" / "intent").mkdir(parents=True)
    (root / "docs" / "research-intent").mkdir(parents=True)
    return root


@pytest.fixture
async def board(store: Store, repo: Path) -> BoardService:
    return BoardService(store, repo)
