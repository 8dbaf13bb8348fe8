"""A seeded board whose page owners can sign in to and act from, as serve() wires it:
the real store and board, the real chat intake behind the page's actions."""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from chatbot.board import BoardService
from chatbot.chat.intake import ChatIntake
from chatbot.chat.web_acts import WebActs
from chatbot.notify.notifier import Destination, Notifier
from chatbot.store import Store
from chatbot.web import WebSettings
from chatbot.web.server import WebBoard
from tests.web.boards import seed
from tests.web.conftest import Site

OWNER_ID = "xmpp:owner@localhost"
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass
class OwnerSite(Site):
    """The board with owners who act: a site that also hands out sign-in links."""

    async def link(self, identity: str = OWNER_ID) -> str:
        return (await self.board.web_sessions.issue(identity)).token

    async def request(self, method: str, path: str, *, headers=None, **kwargs):
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as session:
            async with session.request(
                method, f"{self.url}{path}", headers=headers or {}, allow_redirects=False, **kwargs
            ) as response:
                return response.status, response.headers, await response.text()

    async def sign_in(self, identity: str = OWNER_ID) -> str:
        """A signed-in browser's owner cookie, the way a browser gets it."""
        token = await self.link(identity)
        status, headers, _ = await self.request("POST", "signin", data={"token": token})
        assert status == 303, status
        cookie = re.match(r"board_owner=([^;]+);", headers["Set-Cookie"])
        assert cookie is not None
        return cookie.group(1)

    async def csrf(self, cookie: str, slug: str) -> str:
        status, _, body = await self.request("GET", f"card/{slug}", headers=owner(cookie))
        assert status == 200
        return CSRF.search(body).group(1)

    async def act(self, cookie: str, slug: str, action: str, **fields: str):
        """Press a button on the card's page: its form, then the page it leads back to."""
        data = {"csrf": await self.csrf(cookie, slug), "action": action, **fields}
        status, headers, body = await self.request(
            "POST", f"card/{slug}/act", headers=owner(cookie), data=data
        )
        assert status == 303, (status, body)
        assert headers["Location"] == f"/card/{slug}#act"
        _, _, page = await self.request("GET", f"card/{slug}", headers=owner(cookie))
        return page


def owner(cookie: str) -> dict[str, str]:
    return {"Cookie": f"board_owner={cookie}"}


async def open_owner_site(
    tmp_path: Path,
    *,
    owners=("owner@localhost",),
    locale: str = "en",
    rooms: Sequence[Destination] = (),
    **web,
) -> OwnerSite:
    """`rooms`: the notifier's, as serve() wires it (moves' notices and what is done
    from the page are said there); none, no notifier."""
    repo = tmp_path / "repo"
    (repo / "docs" / "intent").mkdir(parents=True)
    store = await Store.open(tmp_path / "board.sqlite3")
    board = BoardService(store, repo)
    seeded = await seed(board, repo)
    if rooms:
        notifier = Notifier(store, rooms, locale)
        board.listeners.append(notifier)
        board.page_echo = notifier.said_on_web
    token = secrets.token_urlsafe(24)
    chat = ChatIntake(board, owners=list(owners), requesters=["req@localhost"], locale=locale)
    board_web = WebBoard(
        board,
        WebSettings("127.0.0.1", 0, token, locale, **web),
        sessions=board.web_sessions,
        acting=WebActs(chat),
        spend=board.budget.spend_report,
    )
    await board_web.start()
    store.on_commit.append(board_web.wake)
    return OwnerSite(board, store, board_web, repo, token, seeded)
