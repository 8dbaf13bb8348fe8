from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.board import BoardService
from chatbot.store import Store


@pytest.fixture
async def store(database):
    """The store on each engine (tests/conftest.py): SQLite, then PostgreSQL."""
    opened = await Store.open(database.value, password_file=database.password_file)
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
