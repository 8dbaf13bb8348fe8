"""A transaction whose task is cancelled while it waits to begin leaves nothing open.

aiosqlite runs each statement on the writer's thread: cancelling the await does not
stop the BEGIN, which takes the lock as soon as it can. Before the fix the writer
stayed inside that transaction, and every later write failed with "cannot start a
transaction within a transaction" (the bot's outbox died of it at a shutdown).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chatbot.store import Store

pytestmark = pytest.mark.sqlite_only


async def test_a_transaction_cancelled_while_it_waits_to_begin_leaves_none_open(
    tmp_path: Path,
) -> None:
    store = await Store.open(tmp_path / "board.sqlite3")
    try:

        async def write() -> None:
            async with store.transaction() as db:
                await db.execute("INSERT INTO kv (key, value, updated_at) VALUES ('a', 'x', 0)")

        waiting = asyncio.create_task(write())
        await asyncio.sleep(0)  # one turn: the task runs up to its first wait, the BEGIN
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        # The abandoned BEGIN has run on the writer's thread meanwhile (or runs now).
        async with store.transaction() as db:
            await db.execute("INSERT INTO kv (key, value, updated_at) VALUES ('b', 'y', 0)")
        keys = {row[0] for row in await store.reader.fetchall("SELECT key FROM kv")}
        assert "b" in keys and "a" not in keys
    finally:
        await store.close()
