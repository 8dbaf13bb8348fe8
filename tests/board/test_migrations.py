from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from chatbot.store import Store, StoreError
from chatbot.store.migrations import LATEST


async def test_migrations_apply_once_and_set_the_version(tmp_path: Path) -> None:
    path = tmp_path / "b.sqlite3"
    async with await Store.open(path):
        pass
    async with await Store.open(path) as store:  # reopening applies nothing twice
        version = await store.reader.fetchone("PRAGMA user_version")
        mode = await store.reader.fetchone("PRAGMA journal_mode")
        keys = await store.reader.fetchone("PRAGMA foreign_keys")
    assert (version[0], mode[0], keys[0]) == (LATEST, "wal", 1)


async def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {LATEST + 1}")
    with pytest.raises(StoreError, match="newer than this bot knows"):
        await Store.open(path)


async def test_a_second_bot_on_the_same_database_is_refused(tmp_path: Path) -> None:
    from chatbot.store.db import InstanceLock

    first = InstanceLock(tmp_path / "b.sqlite3")
    first.acquire()
    try:
        with pytest.raises(StoreError, match="another bot is already running"):
            InstanceLock(tmp_path / "b.sqlite3").acquire()
    finally:
        first.release()
    InstanceLock(tmp_path / "b.sqlite3").acquire()
