"""SQLite's write-ahead log is copied into the database by the store's checkpointer,
never inside a write: a checkpoint's fsync under the write lock held up the next chat
command's bookkeeping by milliseconds (bench/latency.py's p99)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from chatbot.store import Store
from chatbot.store import sqlite_threads as sqlite_store

PAGE = 4096
# Past SQLite's own automatic checkpoint (1,000 pages), which a write would then run.
ROWS = 1_500


async def _fill(store: Store, start: int) -> None:
    # One transaction each, as the board commits its moves (`write_one` statements go
    # through a connection of their own that never checkpoints either).
    for i in range(start, start + ROWS):
        async with store.transaction() as db:
            await db.execute(
                "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, 0)", (f"k{i}", "x" * 3000)
            )


def _wal_bytes(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


async def test_writes_leave_the_log_to_the_checkpointer(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sqlite_store, "CHECKPOINT_S", 3600.0)  # only when the test asks
    path = tmp_path / "bot.sqlite3"
    async with await Store.open(path) as store:
        await _fill(store, 0)
        grown = _wal_bytes(path)
        # No write copied the log back (it would have been reset and reused at 1,000 pages).
        assert grown > 1_000 * PAGE
        checkpointer = store.checkpointer  # type: ignore[attr-defined]
        await checkpointer.run()
        assert checkpointer.frames >= ROWS
        # Copied in full, so the next writes start the log from its beginning again
        # (appended to, it would have doubled).
        await _fill(store, ROWS)
        assert _wal_bytes(path) < 1.5 * grown
        async with store.transaction() as db:
            rows = await db.fetchall("SELECT count(*) FROM kv WHERE key LIKE 'k%'")
        assert rows[0][0] == 2 * ROWS


async def test_the_checkpointer_runs_on_its_own(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sqlite_store, "CHECKPOINT_S", 0.01)
    path = tmp_path / "bot.sqlite3"
    async with await Store.open(path) as store:
        await _fill(store, 0)
        checkpointer = store.checkpointer  # type: ignore[attr-defined]
        # Two rounds of its own after the last write: the second finds the log there is
        # (rounds during the writes may have let the log start over, so it can be shorter
        # than ROWS frames: waiting for ROWS hung under load).
        after_the_writes = checkpointer.rounds + 2
        while checkpointer.rounds < after_the_writes:
            checkpointer.round_done.clear()
            await asyncio.wait_for(checkpointer.round_done.wait(), 10)
        assert checkpointer.frames > 0
    # Closed with everything copied: the log is gone and the rows are in the file.
    assert _wal_bytes(path) == 0
    async with await Store.open(path) as store:
        row = await store.reader.fetchone("SELECT count(*) FROM kv WHERE key LIKE 'k%'")
        assert row[0] == ROWS
