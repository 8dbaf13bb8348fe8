"""/healthz while the database's disk is full: 503 with the reason, 200 once it is back."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from chatbot.board import BoardService, StoreUnwritable
from chatbot.store import Store
from chatbot.web import WebSettings
from chatbot.web.server import WebBoard
from tests.fulldisk.disk import small_disk

TOKEN = "a-token-of-enough-length"


async def _health(board: WebBoard) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{board.url}healthz") as response:
            return response.status, await response.json()


async def test_health_says_503_with_the_reason_while_the_disk_is_full(tmp_path: Path) -> None:
    with small_disk(tmp_path) as disk:
        store = await Store.open(disk.path / "board.sqlite3")
        store.health.probe_first_s = 0.05
        board = BoardService(store, tmp_path)
        web = WebBoard(board, WebSettings("127.0.0.1", 0, TOKEN))
        await web.start()
        try:
            status, health = await _health(web)
            assert status == 200 and health["store"]["writable"] is True
            disk.fill()
            with pytest.raises(StoreUnwritable):
                for n in range(1000):
                    async with store.transaction() as db:
                        await db.execute(
                            "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, 0)",
                            (f"k{n}", "v" * 4000),
                        )
            status, health = await _health(web)
            assert status == 503 and health["ok"] is False
            assert health["store"]["writable"] is False
            assert "full" in health["store"]["problem"]
            assert health["store"]["since_s"] >= 0
            disk.free()
            await asyncio.wait_for(store.health.wait_writable(), 30)
            status, health = await _health(web)
            assert status == 200 and health["store"] == {
                "writable": True,
                "problem": None,
                "since_s": None,
            }
        finally:
            disk.free()
            await web.stop()
            await store.close()
