"""Schema step 18 (issue 36) moves a database of step 17 forward on both engines: its
outbox rows and chat messages stay as they were, and new ones carry a kept file."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from chatbot.store import Store
from chatbot.store import chat as chat_store
from chatbot.store.dialect import PRELUDE, ddl_for_postgres
from chatbot.store.migrations import LATEST, MIGRATIONS

BEFORE = 17
_OLD_ROWS = (
    "INSERT INTO cards (slug, kind, phase, created_at, updated_at) "
    "VALUES ('old', 'intent', 'planned', 1, 1)",
    "INSERT INTO outbox (transport, room, text, card_id, txn_id, created_at) "
    "VALUES ('console', 'room', 'waiting since step 17', 1, 'board-old', 1)",
    "INSERT INTO chat_messages (transport, room, message_id, card_id, purpose, created_at) "
    "VALUES ('console', 'room', 'm-old', 1, 'notice', 1)",
)


def _at_step(database: Any, version: int) -> None:
    """The database as a bot of schema step `version` left it, with a few rows."""
    steps = MIGRATIONS.steps[:version]
    if isinstance(database.value, Path):
        with sqlite3.connect(database.value) as conn:
            for step in steps:
                conn.executescript(step.sql)
            conn.execute(f"PRAGMA user_version = {version}")
            for sql in _OLD_ROWS:
                conn.execute(sql)
        return
    import psycopg

    password = database.password_file.read_text().strip()
    with psycopg.connect(database.value, password=password, autocommit=True) as conn:
        for statement in PRELUDE:
            conn.execute(statement)
        conn.execute("CREATE TABLE chatbot_schema (version integer)")
        conn.execute("INSERT INTO chatbot_schema (version) VALUES (%s)", (version,))
        for step in steps:
            for statement in MIGRATIONS.statements(step):
                conn.execute(ddl_for_postgres(statement))
        for sql in _OLD_ROWS:
            conn.execute(sql)


async def test_step_18_moves_a_database_of_step_17_forward(database: Any) -> None:
    assert LATEST >= 18 and MIGRATIONS.steps[17].version == 18
    _at_step(database, BEFORE)
    async with await Store.open(database.value, password_file=database.password_file) as store:
        assert await store.schema_version() == LATEST
        waiting = await chat_store.pending(store.reader, "console")
        assert [(row.text, row.attachment_id) for row in waiting] == [
            ("waiting since step 17", None)
        ]
        old = await chat_store.posted(store.reader, "console", "m-old")
        assert old is not None and old.card_id == 1 and old.attachment_id is None
        async with store.transaction() as db:
            file_id = await db.insert(
                "INSERT INTO attachments (sha256, size, content_type, kind, name, card_id, "
                "purpose, created_at) VALUES (?, 5, 'text/plain; charset=utf-8', 'text', "
                "'a.patch', 1, 'outgoing', 2)",
                ("0" * 64,),
            )
            row_id = await chat_store.enqueue(
                db, chat_store.Post("console", "room", "the patch", attachment_id=file_id)
            )
            row = await chat_store.row(db, row_id)
            assert row is not None
            await chat_store.mark_sent(db, row, "m-new")
        sent = await chat_store.row(store.reader, row_id)
        posted = await chat_store.posted(store.reader, "console", "m-new")
    assert sent is not None and sent.attachment_id == file_id
    assert posted is not None and posted.attachment_id == file_id
