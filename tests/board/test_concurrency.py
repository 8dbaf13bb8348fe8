"""Concurrent writers: no lost update, no forked history, one active job per card."""

from __future__ import annotations

import asyncio
from pathlib import Path

from chatbot.board import BoardService
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action, By, TransitionRefused
from chatbot.store import IntegrityError, Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store

WRITERS = 50


async def _one_transition(board: BoardService, slug: str) -> int:
    """Make exactly one move on the card, whatever the others do; returns refusals seen."""
    refusals = 0
    while True:
        card = await board.reads.card(slug)
        action = Action.START if card.phase is Phase.PLANNED else Action.CANCEL
        try:
            await board.act(slug, action, actor="owner@example.org")
            return refusals
        except TransitionRefused:
            refusals += 1  # another writer moved the card between our read and our write


def _assert_linear(history, expected_events: int) -> None:
    assert [e.seq for e in history] == list(range(1, expected_events + 1))
    for previous, current in zip(history, history[1:], strict=False):
        assert current.from_phase is previous.to_phase


async def test_fifty_concurrent_transitions_on_one_connection(board: BoardService) -> None:
    async with board.store.transaction() as db:
        await card_store.create(db, "hot", Kind.INTENT, Phase.PLANNED, actor="test")
    await asyncio.gather(*(_one_transition(board, "hot") for _ in range(WRITERS)))
    card = await board.reads.card("hot")
    history = await card_store.events(board.store.reader, card.id)
    assert len(history) == WRITERS + 1
    assert card.version == WRITERS + 1
    _assert_linear(history, WRITERS + 1)
    assert card.phase is (Phase.PLANNED if WRITERS % 2 == 0 else Phase.OPERATOR_RUNNING)


async def test_fifty_concurrent_transitions_from_separate_connections(
    tmp_path: Path, repo: Path
) -> None:
    """Separate connections behave like separate processes: SQLite's lock decides."""
    path = tmp_path / "shared.sqlite3"
    stores = [await Store.open(path) for _ in range(5)]
    try:
        async with stores[0].transaction() as db:
            await card_store.create(db, "hot", Kind.INTENT, Phase.PLANNED, actor="test")
        boards = [BoardService(s, repo) for s in stores]
        await asyncio.gather(*(_one_transition(boards[i % 5], "hot") for i in range(WRITERS)))
        card = await boards[0].reads.card("hot")
        history = await card_store.events(stores[0].reader, card.id)
        assert card.version == WRITERS + 1
        _assert_linear(history, WRITERS + 1)
        # Every START queued an operator job and every CANCEL cancelled it.
        jobs = await stores[0].reader.fetchall("SELECT state, count(*) FROM jobs GROUP BY state")
        counts = {row[0]: row[1] for row in jobs}
        assert counts == {"cancelled": WRITERS // 2}
    finally:
        for store in stores:
            await store.close()


async def test_one_active_job_per_card_under_concurrent_enqueue(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sqlite3"
    stores = [await Store.open(path) for _ in range(5)]
    try:
        async with stores[0].transaction() as db:
            card = await card_store.create(db, "c", Kind.INTENT, Phase.PLANNED, actor="t")

        async def enqueue(index: int) -> str:
            store = stores[index % len(stores)]
            try:
                async with store.transaction() as db:
                    await job_store.enqueue(
                        db, kind="operator", lane="role:operator", card_id=card.id
                    )
                return "created"
            except job_store.ActiveJobExists:
                return "refused"

        outcomes = await asyncio.gather(*(enqueue(i) for i in range(WRITERS)))
        assert outcomes.count("created") == 1
        assert outcomes.count("refused") == WRITERS - 1
        active = await stores[0].reader.fetchall(
            "SELECT count(*) FROM jobs WHERE card_id = ? AND state IN ('queued', 'running')",
            (card.id,),
        )
        assert active[0][0] == 1
    finally:
        for store in stores:
            await store.close()


async def test_schema_refuses_a_second_active_job_even_without_the_code_path(store: Store) -> None:
    async with store.transaction() as db:
        card = await card_store.create(db, "c", Kind.INTENT, Phase.PLANNED, actor="t")
        await db.execute(
            "INSERT INTO jobs (card_id, kind, lane, state, created_at) "
            "VALUES (?, 'a', 'x', 'running', 0)",
            (card.id,),
        )
    try:
        async with store.transaction() as db:
            await db.execute(
                "INSERT INTO jobs (card_id, kind, lane, state, created_at) "
                "VALUES (?, 'b', 'x', 'queued', 0)",
                (card.id,),
            )
    except IntegrityError as error:
        assert error.about("jobs.card_id", "jobs_one_active_per_card")
    else:
        raise AssertionError("the partial unique index did not hold")


async def test_a_refused_transition_rolls_back_the_whole_transaction(board: BoardService) -> None:
    async with board.store.transaction() as db:
        await card_store.create(db, "a", Kind.INTENT, Phase.PLANNED, actor="t")
        await card_store.create(db, "b", Kind.INTENT, Phase.DEPLOYED, actor="t")
    try:
        async with board.store.transaction() as db:
            await card_store.transition(
                db,
                "a",
                Action.START,
                actor="o",
                by=By.OWNER,
            )
            await card_store.transition(
                db,
                "b",
                Action.START,
                actor="o",
                by=By.OWNER,
            )
    except TransitionRefused:
        pass
    assert (await board.reads.card("a")).phase is Phase.PLANNED
    assert len(await card_store.events(board.store.reader, (await board.reads.card("a")).id)) == 1
