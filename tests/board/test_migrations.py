from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from chatbot.store import Store, StoreError
from chatbot.store.migrations import LATEST, MIGRATIONS, Migrations


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


async def test_a_new_database_says_one_line_and_each_step_only_at_debug(
    database: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 34: a new user's first command opened with a line per step (16 of them).
    caplog.set_level(logging.INFO, logger="chatbot.store")
    store = await Store.open(database.value, password_file=database.password_file)
    await store.close()
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert [line for line in said if "schema step" in line] == [
        f"database {store.name} created at schema step {LATEST}"
    ]
    caplog.clear()
    store = await Store.open(database.value, password_file=database.password_file)
    await store.close()  # nothing left to run: nothing said
    assert not [r for r in caplog.records if "schema step" in r.getMessage()]


async def test_a_migration_says_from_which_step_and_each_step_at_debug(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "twelve.sqlite3"
    with sqlite3.connect(path) as conn:
        for step in MIGRATIONS.steps[:12]:
            conn.executescript(step.sql)
        conn.execute("PRAGMA user_version = 12")
    caplog.set_level(logging.DEBUG, logger="chatbot.store")
    store = await Store.open(path)
    await store.close()
    steps = [r for r in caplog.records if "schema step" in r.getMessage()]
    assert [r.levelno for r in steps] == [logging.DEBUG] * (LATEST - 12) + [logging.INFO]
    assert steps[0].getMessage() == (
        f"database {path}: schema step 13: {MIGRATIONS.steps[12].description}"
    )
    assert steps[-1].getMessage() == f"database {path} migrated from schema step 12 to {LATEST}"


def test_steps_are_registered_in_order() -> None:
    registry = Migrations()
    registry.register(1, "first", "SELECT 1;")
    with pytest.raises(ValueError, match="migration 3 registered after 1"):
        registry.register(3, "skipped one", "SELECT 1;")


async def test_step_7_turns_a_refused_answer_written_into_the_outcome_into_fields(
    tmp_path: Path,
) -> None:
    path = tmp_path / "six.sqlite3"
    with sqlite3.connect(path) as conn:
        for step in MIGRATIONS.steps[:6]:
            conn.executescript(step.sql)
        conn.execute("PRAGMA user_version = 6")
        conn.execute(
            "INSERT INTO cards (slug, kind, phase, lane, created_at, updated_at) "
            "VALUES ('c', 'intent', 'fixer_running', 'heavy', 1, 1)"
        )
        conn.execute(
            "INSERT INTO jobs (card_id, kind, lane, created_at) VALUES (1, 'fixer', 'role:fixer', 1)"
        )
        for outcome in ("rejected: the operator's answer was rejected: x", "ok", "timed out"):
            conn.execute(
                "INSERT INTO telemetry (role, runtime, outcome, created_at) "
                "VALUES ('operator', 'codex', ?, 1)",
                (outcome,),
            )
    async with await Store.open(path) as store:
        rows = await store.reader.fetchall(
            "SELECT outcome, accepted, rejection, pipeline_run_id, cost_estimated "
            "FROM telemetry ORDER BY id"
        )
        fixer = await store.reader.fetchone(
            "SELECT count(*) FROM pragma_table_info('cards') WHERE name = 'fixer_attempts'"
        )
        lane = await store.reader.fetchone("SELECT lane FROM jobs WHERE kind = 'fixer'")
    assert [tuple(row) for row in rows] == [
        ("ok", 0, "the operator's answer was rejected: x", None, 0),
        ("ok", None, None, None, 0),
        ("timed out", None, None, None, 0),
    ]
    assert fixer[0] == 1
    # A fixer queued before the upgrade runs in its card's lane, where the worker looks.
    assert lane[0] == "heavy"
