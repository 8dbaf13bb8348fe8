"""Web sign-in while the database's disk is full: a page still shows for a signed-in
owner (only "last used" stays behind), a sign-in is refused in one clear page and its
link stays unused, and works once the disk has room again."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import aiohttp
import pytest

from chatbot.board import BoardService, StoreUnwritable
from chatbot.board.web_sessions import TOUCH_EVERY_S
from chatbot.store import Store
from chatbot.web import WebSettings
from chatbot.web.server import WebBoard
from tests.fulldisk.disk import small_disk

TOKEN = "a-token-of-enough-length"
OWNER = "xmpp:owner@localhost"


async def _request(web: WebBoard, method: str, path: str, **kwargs) -> tuple[int, dict, str]:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as session:
        async with session.request(
            method, f"{web.url}{path}", allow_redirects=False, **kwargs
        ) as response:
            return response.status, dict(response.headers), await response.text()


async def test_sign_in_on_a_full_disk_is_refused_clearly_and_works_after(tmp_path: Path) -> None:
    with small_disk(tmp_path) as disk:
        store = await Store.open(disk.path / "board.sqlite3")
        store.health.probe_first_s = 0.05
        board = BoardService(store, tmp_path)
        web = WebBoard(board, WebSettings("127.0.0.1", 0, TOKEN), sessions=board.web_sessions)
        await web.start()
        try:
            first = await board.web_sessions.issue(OWNER)
            status, headers, _ = await _request(web, "POST", "signin", data={"token": first.token})
            assert status == 303
            cookie = re.match(r"board_owner=([^;]+);", headers["Set-Cookie"]).group(1)
            later = await board.web_sessions.issue(OWNER)
            disk.fill()
            with pytest.raises(StoreUnwritable):
                for n in range(1000):
                    async with store.transaction() as db:
                        await db.execute(
                            "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, 0)",
                            (f"k{n}", "v" * 4000),
                        )
            # "Last used" is due, and cannot be written: the page shows anyway.
            sessions = board.web_sessions
            real_clock = sessions.clock
            sessions.clock = lambda: real_clock() + TOUCH_EVERY_S + 1
            status, _, _ = await _request(
                web, "GET", "", headers={"Cookie": f"board_owner={cookie}"}
            )
            assert status == 200
            status, headers, body = await _request(
                web, "POST", "signin", data={"token": later.token}
            )
            assert status == 503 and "Set-Cookie" not in headers
            assert "cannot save anything right now" in body and "Traceback" not in body
            sessions.clock = real_clock
            disk.free()
            await asyncio.wait_for(store.health.wait_writable(), 30)
            status, headers, _ = await _request(web, "POST", "signin", data={"token": later.token})
            assert status == 303 and "board_owner=" in headers["Set-Cookie"]
        finally:
            disk.free()
            await web.stop()
            await store.close()
