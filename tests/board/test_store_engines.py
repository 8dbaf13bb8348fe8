"""The store's promises on both engines (tests/conftest.py runs each test on SQLite and
on a real PostgreSQL): wake-ups across processes, which writes wake whom, the SQL
written once, and how each engine says a constraint refused a write."""

from __future__ import annotations

import asyncio

import pytest

from chatbot.store import IntegrityError, Store
from chatbot.store.dialect import for_postgres, for_sqlite


async def _open(database) -> Store:
    return await Store.open(database.value, password_file=database.password_file)


async def test_a_commit_elsewhere_wakes_this_process(database) -> None:
    here, there = await _open(database), await _open(database)
    try:
        woken = asyncio.Event()
        here.on_commit.append(woken.set)
        here.follow_other_processes()
        if here.engine == "postgresql":
            await here.wait_listening()  # type: ignore[attr-defined]
        woken.clear()
        async with there.transaction() as db:
            await db.execute("INSERT INTO kv (key, value, updated_at) VALUES ('k', 'v', 0)")
        await asyncio.wait_for(woken.wait(), 10)
    finally:
        await there.close()
        await here.close()


async def test_single_statements_wake_only_who_asked(store: Store) -> None:
    if store.engine == "postgresql":
        # Listening starts with one wake-up (for what was committed before): let it pass.
        await store.wait_listening()  # type: ignore[attr-defined]
    commits, writes = [], []
    store.on_commit.append(lambda: commits.append(1))
    store.on_write.append(lambda: writes.append(1))
    sql = "INSERT INTO kv (key, value, updated_at) VALUES (?, 'v', 0)"
    await store.write_one(sql, ("a",))
    assert (commits, writes) == ([], [])  # a mark, a sync token: nobody needs to know
    await store.write_one(sql, ("b",), wake=True)  # a reply queued: the outbox sender
    assert (commits, writes) == ([], [1])
    async with store.transaction(exclusive=False) as db:  # a claim, a heartbeat
        await db.execute(sql, ("c",))
    assert commits == []
    async with store.transaction() as db:  # a move
        await db.execute(sql, ("d",))
    assert commits == [1]
    rows = await store.reader.fetchall("SELECT key FROM kv ORDER BY key")
    assert [row["key"] for row in rows] == ["a", "b", "c", "d"]


async def test_a_refused_write_names_its_constraint_in_both_engines(store: Store) -> None:
    await store.write_one("INSERT INTO kv (key, value, updated_at) VALUES ('k', 'v', 0)")
    with pytest.raises(IntegrityError) as refused:
        await store.write_one("INSERT INTO kv (key, value, updated_at) VALUES ('k', 'w', 0)")
    assert refused.value.about("kv.key", "kv_pkey")
    async with store.transaction() as db:  # the failed statement left nothing behind
        assert await db.execute("UPDATE kv SET value = 'x' WHERE key = 'k'") == 1


def test_the_sql_is_written_once_and_translated() -> None:
    sql = (
        "SELECT json_group_array(json_array(a, '?', ':x')) FROM t WHERE b = ? AND c = :c "
        "AND d::text LIKE '50%' FOR UPDATE SKIP LOCKED"
    )
    assert for_postgres(sql) == (
        "SELECT json_group_array(json_build_array(a, '?', ':x')) FROM t WHERE b = %s "
        "AND c = %(c)s AND d::text LIKE '50%%' FOR UPDATE SKIP LOCKED"
    )
    assert for_sqlite(sql).endswith("LIKE '50%'")
