"""Schema step 20 moves a database of step 19 forward on both engines: the index the
waiting cards are found along is there, and the board page reads its columns from it."""

from __future__ import annotations

from typing import Any

from chatbot.board import BoardService
from chatbot.board.board_columns import Column
from chatbot.domain.phases import Kind, Phase
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store.migrations import LATEST, MIGRATIONS
from tests.board.test_attachment_migration import _at_step

_INDEXES = {
    "sqlite": "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'cards'",
    "postgresql": "SELECT indexname FROM pg_indexes WHERE tablename = 'cards' "
    "AND schemaname = current_schema()",
}


async def test_step_20_moves_a_database_of_step_19_forward(database: Any, tmp_path) -> None:
    assert LATEST >= 20 and MIGRATIONS.steps[19].version == 20
    _at_step(database, 19)
    async with await Store.open(database.value, password_file=database.password_file) as store:
        assert await store.schema_version() == LATEST
        names = {row[0] for row in await store.reader.fetchall(_INDEXES[store.engine])}
        assert "cards_waits_itself" in names
        async with store.transaction() as db:
            await card_store.create(db, "broke", Kind.INTENT, Phase.FAILED, actor="t")
            approved = await card_store.create(
                db, "approved", Kind.INTENT, Phase.READY_FOR_DEPLOYMENT, actor="t"
            )
            await db.execute(
                "UPDATE cards SET deployment_status = 'pending' WHERE id = ?", (approved.id,)
            )
        board = BoardService(store, tmp_path)
        planned, waiting = await board.web.board_columns(
            [Column((Phase.PLANNED,), 10), Column((), 10, waits=True)]
        )
    # The card of step 19 is where it was; the new ones wait for an owner.
    assert [card.slug for card in planned.cards] == ["old"]
    assert [card.slug for card in waiting.cards] == ["approved", "broke"]
