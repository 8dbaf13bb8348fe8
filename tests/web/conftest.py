from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

import pytest

from chatbot.board import BoardService
from chatbot.store import Store
from chatbot.web import WebSettings
from chatbot.web.server import WebBoard
from tests.web.boards import Seeded, seed
from tests.web.browser import Browser


@pytest.fixture(scope="session")
def chromium():
    """One browser for the session; each test starts as a fresh visitor (`browser`)."""
    browser = Browser()
    yield browser
    browser.close()


@pytest.fixture
def browser(chromium: Browser) -> Browser:
    chromium.reset()
    return chromium


@dataclass
class Site:
    board: BoardService
    store: Store
    web: WebBoard
    repo: Path
    token: str
    seeded: Seeded

    @property
    def url(self) -> str:
        return self.web.url

    def login_url(self, path: str = "") -> str:
        return f"{self.web.url}{path}?token={self.token}"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    async def close(self) -> None:
        await self.web.stop()
        await self.store.close()


async def open_site(tmp_path: Path, *, locale: str = "en", planned: int = 3, **web):
    """A seeded board served on a free port; `web` sets WebSettings' other fields."""
    repo = tmp_path / "repo"
    (repo / "docs" / "intent").mkdir(parents=True)
    store = await Store.open(tmp_path / "board.sqlite3")
    board = BoardService(store, repo)
    seeded = await seed(board, repo, planned=planned)
    token = secrets.token_urlsafe(24)
    board_web = WebBoard(board, WebSettings("127.0.0.1", 0, token, locale, **web))
    await board_web.start()
    store.on_commit.append(board_web.wake)  # as serve() wires it
    return Site(board, store, board_web, repo, token, seeded)


@pytest.fixture
async def site(request: pytest.FixtureRequest, tmp_path: Path):
    """The board on a seeded store; a module that sets `OWNERS = True` gets it with
    owners who sign in and act (tests/web/owners.py)."""
    if getattr(request.module, "OWNERS", False):
        from tests.web.owners import open_owner_site  # it builds on this module's Site

        opened: Site = await open_owner_site(tmp_path)
    else:
        opened = await open_site(tmp_path)
    try:
        yield opened
    finally:
        await opened.close()
