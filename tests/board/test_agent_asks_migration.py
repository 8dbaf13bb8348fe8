"""Schema step 21 (issue 38) moves a database of step 20 forward on both engines: its
open question stays open and still the card's only one of its kind, while a working
agent's questions may wait beside it; proposals and their posts have their tables."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from chatbot.board import BoardService
from chatbot.store import Store
from chatbot.store import chat as chat_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.store.dialect import PRELUDE, ddl_for_postgres
from chatbot.store.migrations import LATEST, MIGRATIONS

BEFORE = 20
_OLD_ROWS = (
    "INSERT INTO cards (slug, kind, phase, created_at, updated_at) "
    "VALUES ('old', 'intent', 'building', 1, 1)",
    "INSERT INTO questions (card_id, kind, text, options, created_at) "
    "VALUES (1, 'operator', 'asked at step 20', '[]', 1)",
)


def _at_step(database: Any, version: int) -> None:
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


async def test_step_21_moves_a_database_of_step_20_forward(database: Any, tmp_path) -> None:
    assert LATEST >= 21 and MIGRATIONS.steps[20].version == 21
    _at_step(database, BEFORE)
    async with await Store.open(database.value, password_file=database.password_file) as store:
        assert await store.schema_version() == LATEST
        old = await question_store.open_for_card(store.reader, 1)
        assert old is not None and old.text == "asked at step 20"
        assert (old.job_id, old.answered_via, old.closed_reason) == (None, None, None)
        # The card's one-open-question rule still holds for its own kinds...
        with pytest.raises(Exception):  # noqa: B017, PT011 - each engine's IntegrityError
            async with store.transaction() as db:
                await db.insert(
                    "INSERT INTO questions (card_id, kind, text, options, created_at) "
                    "VALUES (1, 'draft', 'a second one', '[]', 2)"
                )
        # ...and a working agent's questions wait beside it.
        async with store.transaction() as db:
            await job_store.enqueue(db, kind="builder", lane="light", card_id=1)
            job = await job_store.claim(db, "light", "w1", 60, host="h")
        assert job is not None
        board = BoardService(store, tmp_path)
        card = await board.reads.card("old")
        first = await board.asks.ask(job, card, "first?", ["a", "b"])
        second = await board.asks.ask(job, card, "second?", [])
        rows = await question_store.open_of_card(store.reader, 1)
        assert [q.id for q in rows] == [old.id, first.id, second.id]
        made = await board.asks.propose(job, card, "Cache the index", "Make it fast", "")
        assert made.slug == "cache-the-index" and made.state == "pending"
        # A post and the message it became carry the proposal.
        async with store.transaction() as db:
            row_id = await chat_store.enqueue(
                db,
                chat_store.Post("console", "room", "proposed", card_id=1, proposal_id=made.id),
            )
            outgoing = await chat_store.row(db, row_id)
            assert outgoing is not None
            await chat_store.mark_sent(db, outgoing, "m-1")
        posted = await chat_store.posted(store.reader, "console", "m-1")
        assert posted is not None and posted.proposal_id == made.id
