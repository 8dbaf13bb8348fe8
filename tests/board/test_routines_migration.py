"""The routines' schema step moves a database of the step before forward on both
engines: the tables are there, a routine is added, and one occurrence is decided once."""

from __future__ import annotations

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
        made = await board.add_routine(new_routine(schedule, "/start old", "o", ROOM, 0.0))
        assert made.next_at == 9 * 3600
        assert len(await board.claim_due(9 * 3600 + 1)) == 1
        assert await board.claim_due(9 * 3600 + 2) == []
