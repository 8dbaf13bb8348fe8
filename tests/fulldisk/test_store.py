"""The store on a disk that fills: writes are refused in words, reads go on, the
health says so, and writes work again by themselves once space is back."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from chatbot.store import Store, StoreUnwritable
from chatbot.store.kv import TransportState
from tests.fulldisk.disk import SmallDisk, small_disk

pytestmark = pytest.mark.sqlite_only


@pytest.fixture
def disk(tmp_path: Path):
    with small_disk(tmp_path) as made:
        yield made


async def _put(store: Store, key: str, size: int = 2000) -> None:
    async with store.transaction() as db:
        await db.execute(
            "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, 0)", (key, "v" * size)
        )


async def _fill_until_refused(store: Store, disk: SmallDisk) -> StoreUnwritable:
    disk.fill()
    for n in range(1000):
        try:
            await _put(store, f"filler-{n}")
        except StoreUnwritable as refused:
            return refused
    raise AssertionError("a full disk took 1000 writes")


async def test_a_full_disk_refuses_writes_in_words_and_keeps_reads(disk: SmallDisk) -> None:
    store = await Store.open(disk.path / "board.sqlite3")
    try:
        await _put(store, "before")
        refused = await _fill_until_refused(store, disk)
        assert "disk holding it is full" in str(refused)
        assert str(disk.path) in str(refused)
        assert store.health.problem is not None and "full" in store.health.problem
        assert not store.health.writable
        # A single statement (the chat's hot path) is refused the same way.
        with pytest.raises(StoreUnwritable):
            await store.write_one(
                "INSERT INTO kv (key, value, updated_at) VALUES ('one', ?, 0)", ("x" * 5000,)
            )
        # Reads go on: what was committed is there.
        row = await store.reader.fetchone("SELECT key FROM kv WHERE key = 'before'")
        assert row is not None
    finally:
        disk.free()
        await store.close()


async def test_writes_resume_by_themselves_when_space_is_back(disk: SmallDisk) -> None:
    store = await Store.open(disk.path / "board.sqlite3")
    store.health.probe_first_s = 0.05  # the probe's back-off, made short for the test
    try:
        await _put(store, "before")
        await _fill_until_refused(store, disk)
        waiting = asyncio.ensure_future(store.health.wait_writable())
        await asyncio.sleep(0)
        assert not waiting.done()
        disk.free()
        # Nobody writes: the store's own probe finds out.
        await asyncio.wait_for(waiting, 30)
        assert store.health.writable and store.health.problem is None
        await _put(store, "after")
        keys = {row[0] for row in await store.reader.fetchall("SELECT key FROM kv")}
        assert {"before", "after"} <= keys
    finally:
        disk.free()
        await store.close()
    # Nothing committed was lost, and the file is sound.
    with sqlite3.connect(disk.path / "board.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM kv WHERE key = 'before'").fetchone()[0] == 1


async def test_the_probe_waits_for_real_room_not_a_freed_page(disk: SmallDisk) -> None:
    """Deleting a row frees a page inside the file; the disk is still full. Writes that
    fit into that page may work, but the health says so only with room on the disk."""
    store = await Store.open(disk.path / "board.sqlite3")
    try:
        await _fill_until_refused(store, disk)
        await store.probe_write()
        assert not store.health.writable
        assert "bytes free" in (store.health.problem or "")
    finally:
        disk.free()
        await store.close()


async def test_a_transport_still_sees_each_event_once_on_a_full_disk(disk: SmallDisk) -> None:
    store = await Store.open(disk.path / "board.sqlite3")
    state = TransportState(store)
    try:
        assert await state.mark_processed("xmpp", "saved")
        await _fill_until_refused(store, disk)
        # The id cannot be saved, but the event is handled (the chat says why it
        # refuses changes), and only once.
        assert await state.mark_processed("xmpp", "unsaved") is True
        assert await state.mark_processed("xmpp", "unsaved") is False
        assert await state.mark_processed("xmpp", "saved") is False
        await state.set_value("sync-token", "s42")
        assert await state.get_value("sync-token") == "s42"
        disk.free()
        await state.set_value("sync-token", "s43")
        assert await state.get_value("sync-token") == "s43"
        row = await store.reader.fetchone("SELECT value FROM kv WHERE key = 'sync-token'")
        assert row is not None and row[0] == "s43"
    finally:
        disk.free()
        await store.close()


async def test_a_write_that_fits_on_a_still_full_disk_does_not_end_the_trouble(
    disk: SmallDisk,
) -> None:
    """A write that needs no new space (here one that changes nothing) goes through on a
    full disk; the rooms must not hear "saves again" from it while the next real write
    fails (a fresh-clone run saw the episode end and begin again within a millisecond)."""
    store = await Store.open(disk.path / "board.sqlite3")
    told: list[bool] = []
    store.health.listeners.append(lambda health: told.append(health.writable))
    try:
        await _fill_until_refused(store, disk)
        assert told == [False]
        fits = "UPDATE kv SET updated_at = 1 WHERE key = 'no such key'"
        assert await store.write_one(fits) == 0
        async with store.transaction() as db:
            await db.execute(fits)
        assert not store.health.writable and told == [False]
        # With room on the disk, a write (not only the probe) ends it, once.
        disk.free()
        await store.write_one(fits)
        assert store.health.writable and told == [False, True]
    finally:
        disk.free()
        await store.close()
