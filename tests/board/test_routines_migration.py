"""The routines' schema step moves a database of the step before forward on both
engines: the tables are there, a routine is added, and one occurrence is decided once."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from chatbot.board import BoardService
from chatbot.board.routines import new_routine
from chatbot.domain.schedules import parse
from chatbot.store import Store
from chatbot.store.migrations import LATEST, MIGRATIONS
from tests.board.test_attachment_migration import _at_step

ROOM = {"transport": "xmpp", "target": "ops@muc", "target_kind": "room"}


async def test_the_routines_step_moves_a_database_of_the_step_before_forward(
    database: Any, tmp_path
) -> None:
    step = next(s.version for s in MIGRATIONS.steps if "routines" in s.description)
    _at_step(database, step - 1)
    async with await Store.open(database.value, password_file=database.password_file) as store:
        assert await store.schema_version() == LATEST
        board = BoardService(store, tmp_path)
        schedule = parse("every day 09:00", "UTC", 0.0, once=False)
        made = await board.routines.add(new_routine(schedule, "/start old", "o", ROOM, 0.0))
        assert made.next_at == 9 * 3600
        assert len(await board.routines.claim_due(9 * 3600 + 1)) == 1
        assert await board.routines.claim_due(9 * 3600 + 2) == []


def _run_sql(database: Any, statements: list[str]) -> None:
    if isinstance(database.value, Path):
        with sqlite3.connect(database.value) as conn:
            for sql in statements:
                conn.execute(sql)
        return
    import psycopg

    password = database.password_file.read_text().strip()
    with psycopg.connect(database.value, password=password, autocommit=True) as conn:
        for sql in statements:
            conn.execute(sql)


async def test_the_pause_cause_step_reads_the_words_the_step_before_wrote(
    database: Any, tmp_path
) -> None:
    step = next(s.version for s in MIGRATIONS.steps if "routine is paused" in s.description)
    _at_step(database, step - 1)
    # As the code of the step before wrote them: the cause only in the words.
    words = {
        "paused": "its last 3 runs failed: no card x",
        "paused ": "its cards spent $5.00 of its $5.00 budget",
        "paused  ": "paused by xmpp:owner@example.org",
        "stopped": "xmpp:gone@example.org is no longer an owner",
        "active": "",
    }
    _run_sql(
        database,
        [
            "INSERT INTO routines (source, when_text, cron, timezone, command, owner, transport, "
            "target, target_kind, state, why, next_at, created_at, updated_at) VALUES "
            f"('chat', 'every day 09:00', '0 9 * * *', 'UTC', '/start x', 'o', 'xmpp', "
            f"'ops@muc', 'room', '{state.strip()}', '{why}', 1, 1, {n})"
            for n, (state, why) in enumerate(words.items())
        ],
    )
    async with await Store.open(database.value, password_file=database.password_file) as store:
        assert await store.schema_version() == LATEST
        board = BoardService(store, tmp_path)
        causes = [(r.state, r.pause_cause) for r in await board.routines.listed()]
        assert causes == [
            ("paused", "failures"),
            ("paused", "budget"),
            ("paused", "owner"),
            ("stopped", "owner_gone"),
            ("active", ""),
        ]
        from chatbot.board import inbox

        waiting = [i.text for i in await inbox.inbox(board) if i.kind == inbox.InboxKind.ROUTINE]
        assert waiting == [
            "#1 /start x: its last 3 runs failed: no card x",
            "#2 /start x: its cards spent $5.00 of its $5.00 budget",
        ]


async def test_the_owner_settings_step_keeps_an_owners_zone_on_both_engines(
    database: Any, tmp_path
) -> None:
    step = next(s.version for s in MIGRATIONS.steps if "owner's own settings" in s.description)
    _at_step(database, step - 1)
    async with await Store.open(database.value, password_file=database.password_file) as store:
        assert await store.schema_version() == LATEST
        board = BoardService(store, tmp_path)
        assert await board.routines.owner_zone("xmpp:o@x.org") is None
        await board.routines.set_owner_zone("xmpp:o@x.org", "Europe/Berlin")
        # the same row again
        await board.routines.set_owner_zone("xmpp:o@x.org", "America/New_York")
        await board.routines.set_owner_zone("matrix:@p:x.org", "Asia/Tokyo")
        await board.routines.set_owner_zone("matrix:@p:x.org", None)
        assert await board.routines.owner_zones() == {"xmpp:o@x.org": "America/New_York"}
        try:
            await board.routines.set_owner_zone("xmpp:o@x.org", "Mars/Olympus")
        except ValueError as error:
            assert "is no time zone" in str(error)
        else:
            raise AssertionError("an unknown zone was kept")
        assert await board.routines.owner_zone("xmpp:o@x.org") == "America/New_York"
