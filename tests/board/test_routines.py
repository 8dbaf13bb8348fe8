"""Routines on the board (board/routines.py), on SQLite and on a real PostgreSQL: each
occurrence is decided by one insert under (routine, due_at), so two bots on one board
fire it once; a missed one runs once at start or is skipped, as the routine says; a
paused one is not due; three failures in a row pause it."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from chatbot.board import BoardService
from chatbot.board.routines import LATE_S, new_routine
from chatbot.domain.schedules import parse
from chatbot.store import Store
from chatbot.store import routines as routine_store

BERLIN = ZoneInfo("Europe/Berlin")
ROOM = {"transport": "xmpp", "target": "ops@muc", "target_kind": "room"}


def at(*parts: int) -> float:
    return datetime(*parts, tzinfo=BERLIN).timestamp()


MONDAY_9 = at(2026, 12, 7, 9, 0)


async def weekly(board: BoardService, now: float, catch_up: str = "once"):
    schedule = parse("monday 09:00", "Europe/Berlin", now, once=False)
    row = new_routine(
        schedule, "/research deps", "xmpp:owner@example.org", ROOM, now, catch_up=catch_up
    )
    return await board.routines.add(row)


async def test_two_boards_on_one_database_decide_an_occurrence_once(database, repo) -> None:
    stores = [
        await Store.open(database.value, password_file=database.password_file) for _ in range(2)
    ]
    try:
        here, there = (BoardService(s, repo) for s in stores)
        routine = await weekly(here, at(2026, 12, 2, 17, 0))
        assert routine.next_at == MONDAY_9
        assert await here.routines.claim_due(MONDAY_9 - 1) == []
        won = [
            await here.routines.claim_due(MONDAY_9 + 0.5),
            await there.routines.claim_due(MONDAY_9 + 0.7),
        ]
        assert [len(w) for w in won] == [1, 0]
        assert not won[0][0].late
        assert (await there.routines.get(routine.id)).next_at == at(2026, 12, 14, 9, 0)
        # Even an insert for the same occurrence from a process that read the old
        # next_at does nothing: the unique key decides.
        async with stores[1].transaction() as db:
            again = await routine_store.claim(db, routine.id, MONDAY_9, "claimed", False, 0)
        assert again is False
    finally:
        for store in stores:
            await store.close()


async def test_a_missed_occurrence_runs_once_or_is_skipped(board: BoardService) -> None:
    once = await weekly(board, at(2026, 12, 2, 17, 0))
    skip = await weekly(board, at(2026, 12, 2, 17, 0), catch_up="skip")
    # Everything was down for two Mondays.
    start = at(2026, 12, 15, 8, 0)
    won = {o.routine.id: o for o in await board.routines.claim_due(start)}
    assert won[once.id].late and not won[once.id].skipped
    assert won[once.id].due_at == at(2026, 12, 14, 9, 0) and won[once.id].missed == 2
    assert won[skip.id].skipped
    assert await board.routines.claim_due(start + 60) == []
    runs = await board.routines.runs(once.id)
    assert [(r.due_at, r.late) for r in runs] == [(at(2026, 12, 14, 9, 0), True)]
    assert (await board.routines.runs(skip.id))[0].outcome == routine_store.SKIPPED
    # Found within LATE_S of its time, an occurrence is on time.
    on_time = await board.routines.claim_due(at(2026, 12, 21, 9, 0) + LATE_S - 1)
    assert {o.late for o in on_time} == {False}


async def test_a_paused_routine_is_not_due_and_resumes_from_now(board: BoardService) -> None:
    routine = await weekly(board, at(2026, 12, 2, 17, 0))
    await board.routines.set_state(routine.id, routine_store.PAUSED, "paused by owner")
    assert await board.routines.claim_due(MONDAY_9 + 1) == []
    resumed = await board.routines.set_state(routine.id, routine_store.ACTIVE, now=MONDAY_9 + 3600)
    assert resumed.next_at == at(2026, 12, 14, 9, 0)
    assert await board.routines.claim_due(MONDAY_9 + 7200) == []


async def test_three_failures_in_a_row_pause_the_routine(board: BoardService) -> None:
    routine = await weekly(board, at(2026, 12, 2, 17, 0))
    paused = []
    for week in range(3):
        moment = MONDAY_9 + week * 7 * 86400
        (occurrence,) = await board.routines.claim_due(moment + 1)
        paused.append(
            await board.routines.finish_run(occurrence, "refused", None, "no card x", moment)
        )
    assert paused == [False, False, True]
    found = await board.routines.get(routine.id)
    assert found.state == routine_store.PAUSED and "last 3 runs failed" in found.why
    assert found.pause_cause == routine_store.BY_FAILURES
    assert await board.routines.outcomes() == {"refused": 3}


async def test_a_one_time_routine_is_done_after_its_moment(board: BoardService) -> None:
    now = at(2026, 12, 2, 17, 0)
    schedule = parse("tomorrow 02:00", "Europe/Berlin", now, once=True)
    routine = await board.routines.add(new_routine(schedule, "/start x", "o", ROOM, now))
    assert len(await board.routines.claim_due(at(2026, 12, 3, 2, 0))) == 1
    assert (await board.routines.get(routine.id)).state == routine_store.DONE
    assert await board.routines.next_at() is None


async def test_the_inbox_reads_who_paused_a_routine_not_its_words(board: BoardService) -> None:
    from chatbot.board import inbox

    now = at(2026, 12, 2, 17, 0)
    failing, spent, owners, gone = [await weekly(board, now) for _ in range(4)]
    # Words that once meant "paused itself", from an owner; and plain words for the rest.
    await board.routines.set_state(owners.id, routine_store.PAUSED, "its time is wrong")
    await board.routines.set_state(failing.id, routine_store.PAUSED, "3 Fehler", cause="failures")
    await board.routines.set_state(spent.id, routine_store.PAUSED, "over", cause="budget")
    await board.routines.set_state(gone.id, routine_store.STOPPED, "its owner left")
    causes = {r.id: r.pause_cause for r in await board.routines.listed()}
    assert causes == {
        failing.id: "failures",
        spent.id: "budget",
        owners.id: "owner",
        gone.id: "owner_gone",
    }
    items = [i for i in await inbox.inbox(board) if i.kind == inbox.InboxKind.ROUTINE]
    assert [i.text for i in items] == [
        f"#{failing.id} /research deps: 3 Fehler",
        f"#{spent.id} /research deps: over",
    ]
    # Resumed, it runs and waits for nobody.
    resumed = await board.routines.set_state(failing.id, routine_store.ACTIVE, now=now)
    assert resumed.pause_cause == "" and resumed.state == routine_store.ACTIVE
    assert len([i for i in await inbox.inbox(board) if i.kind == inbox.InboxKind.ROUTINE]) == 1
    with pytest.raises(ValueError):
        await board.routines.set_state(spent.id, routine_store.PAUSED, "x", cause="whim")
