"""Routines on a clock the tests control (chat/routine_clock.py): a weekly routine fires
once at its time though two bots share the board (one card started, not two); a
restart across its time runs it once or not at all as its catch_up says, and the room
is told; a daily routine keeps its local time across a daylight-saving change; a paused
one does not fire; one whose owner was removed stops and says so; three failed runs
pause it. Real stores (SQLite and PostgreSQL where named), the real board and chat."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from chatbot.board import BoardService
from chatbot.board.routines import new_routine
from chatbot.chat.intake import ChatIntake
from chatbot.chat.routine_clock import RoutineClock
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.schedules import parse
from chatbot.store import Store, telemetry
from chatbot.store import cards as card_store
from tests.chat.conftest import ROOM, Env, msg
from tests.records import run_record

BERLIN = "Europe/Berlin"
CHAT = {"transport": ROOM.transport, "target": ROOM.id, "target_kind": "room"}
OWNERS = ["owner@example.org"]


def at(*parts: int) -> float:
    return datetime(*parts, tzinfo=ZoneInfo(BERLIN)).timestamp()


MADE = at(2027, 1, 6, 12, 0)  # a Wednesday
MONDAY_9 = at(2027, 1, 11, 9, 0)


async def routine(board: BoardService, when: str, command: str, **options):
    schedule = parse(when, BERLIN, MADE, once=False)
    row = new_routine(schedule, command, "xmpp:owner@example.org", CHAT, MADE, **options)
    return await board.routines.add(row)


def intake(board: BoardService, owners=OWNERS) -> ChatIntake:
    return ChatIntake(board, owners=owners, requesters=["req@example.org"])


async def planned(store: Store, slug: str) -> None:
    async with store.transaction() as db:
        await card_store.create(db, slug, Kind.INTENT, Phase.PLANNED, actor="test", title=slug)


async def said(store: Store) -> list[str]:
    rows = await store.reader.fetchall("SELECT text FROM outbox ORDER BY id")
    return [row[0] for row in rows]


async def test_a_weekly_routine_fires_once_on_two_bots_sharing_a_board(
    database, tmp_path: Path
) -> None:
    stores = [
        await Store.open(database.value, password_file=database.password_file) for _ in range(2)
    ]
    try:
        boards = [BoardService(store, tmp_path) for store in stores]
        await planned(stores[0], "deps")
        made = await routine(boards[0], "monday 09:00", "/start deps")
        clocks = [RoutineClock(intake(board)) for board in boards]
        assert [await c.tick(MONDAY_9 - 1) for c in clocks] == [MONDAY_9, MONDAY_9]
        assert (await boards[0].reads.card("deps")).phase is Phase.PLANNED
        # Both bots look at the moment together.
        await asyncio.gather(*(c.tick(MONDAY_9 + 0.2) for c in clocks))
        jobs = await stores[1].reader.fetchall("SELECT kind FROM jobs")
        assert len(jobs) == 1
        card = await boards[1].reads.card("deps")
        assert card.phase is not Phase.PLANNED
        events = (await boards[1].reads.view("deps")).events
        assert events[-1].actor == "xmpp:owner@example.org via routine"
        (text,) = await said(stores[0])
        assert text.startswith(
            f"⏰ Routine #{made.id} (/start deps, due Mon 2027-01-11 09:00 CET):\n"
        )
        runs = await boards[0].routines.runs(made.id)
        assert [(r.outcome, r.slug, r.late) for r in runs] == [("ran", "deps", False)]
        assert (await boards[0].routines.get(made.id)).next_at == at(2027, 1, 18, 9, 0)
    finally:
        for store in stores:
            await store.close()


async def test_a_restart_across_its_time_runs_it_once_or_skips_it(env: Env) -> None:
    await env.card("deps")
    await env.card("docs")
    once = await routine(env.board, "monday 09:00", "/start deps")
    skip = await routine(env.board, "monday 09:00", "/start docs", catch_up="skip")
    # Down from Sunday to Tuesday: the bot starts again after their time.
    clock = RoutineClock(env.chat)
    await clock.tick(at(2027, 1, 12, 8, 0))
    assert await env.phase("deps") is not Phase.PLANNED
    assert await env.phase("docs") is Phase.PLANNED
    texts = await said(env.store)
    assert any(
        f"Routine #{once.id} (/start deps): missed 1 time while the bot was down "
        "(last due Mon 2027-01-11 09:00 CET); running it once now" in t
        for t in texts
    )
    assert any(
        f"Routine #{skip.id} (/start docs): missed 1 time" in t and "skipped" in t for t in texts
    )
    # A second start at once changes nothing: the occurrences are decided.
    await RoutineClock(env.chat).tick(at(2027, 1, 12, 8, 1))
    assert len(await env.jobs()) == 1
    assert await env.board.routines.outcomes() == {"ran": 1, "skipped": 1}


async def test_a_daily_routine_fires_at_the_local_time_across_daylight_saving(
    env: Env,
) -> None:
    await env.card("deps")
    made = await routine(env.board, "every day 09:00", "/start deps")
    clock = RoutineClock(env.chat)
    await env.board.routines.set_state(made.id, "active", now=at(2027, 3, 27, 10, 0))
    # Berlin springs forward on Sunday 28 March 2027: 09:00 CEST is 07:00 UTC.
    sunday_9 = at(2027, 3, 28, 9, 0)
    assert sunday_9 - at(2027, 3, 27, 9, 0) == 23 * 3600
    assert await clock.tick(sunday_9 - 1) == sunday_9
    assert await env.board.routines.runs(made.id) == []
    await clock.tick(sunday_9)
    (run,) = await env.board.routines.runs(made.id)
    assert run.due_at == sunday_9 and "due Sun 2027-03-28 09:00 CEST" in (await said(env.store))[0]


async def test_a_paused_routine_does_not_fire(env: Env) -> None:
    await env.card("deps")
    made = await routine(env.board, "monday 09:00", "/start deps")
    await env.board.routines.set_state(made.id, "paused", "by test")
    await RoutineClock(env.chat).tick(MONDAY_9 + 1)
    assert await env.phase("deps") is Phase.PLANNED and await said(env.store) == []


async def test_a_routine_of_a_removed_owner_stops_and_says_so(env: Env) -> None:
    await env.card("deps")
    made = await routine(env.board, "monday 09:00", "/start deps")
    # The configuration no longer names the owner.
    await RoutineClock(intake(env.board, owners=["other@example.org"])).tick(MONDAY_9)
    assert await env.phase("deps") is Phase.PLANNED
    (text,) = await said(env.store)
    assert "stopped: xmpp:owner@example.org is no longer an owner" in text
    stopped = await env.board.routines.get(made.id)
    assert stopped.state == "stopped" and stopped.next_at is not None
    assert stopped.pause_cause == "owner_gone"
    await RoutineClock(env.chat).tick(MONDAY_9 + 7 * 86400)
    assert len(await said(env.store)) == 1


async def test_three_failed_runs_pause_the_routine(env: Env) -> None:
    made = await routine(env.board, "monday 09:00", "/start gone")  # the card is not there
    clock = RoutineClock(env.chat)
    for week in range(3):
        await clock.tick(MONDAY_9 + week * 7 * 86400)
    texts = await said(env.store)
    assert "There is no card 'gone'" in texts[0]
    assert "paused itself: its last 3 runs failed" in texts[-1]
    assert (await env.board.routines.get(made.id)).state == "paused"
    await clock.tick(MONDAY_9 + 3 * 7 * 86400)
    assert len(await env.board.routines.runs(made.id)) == 3
    # It waits in the inbox with its ways on.
    inbox = (await env.one(msg("/inbox"))).text
    assert f"⏰ routine #{made.id} /start gone: its last 3 runs failed" in inbox
    assert f"/routine resume {made.id}, /routine delete {made.id}" in inbox
    await env.said(msg(f"/routine resume {made.id}"))
    assert "Nothing waits for you" in (await env.one(msg("/inbox"))).text


async def test_a_routine_over_its_budget_pauses(env: Env) -> None:
    await env.card("deps")
    made = await routine(env.board, "monday 09:00", "/start deps", budget_usd=0.000001)
    clock = RoutineClock(env.chat)
    await clock.tick(MONDAY_9)
    card = await env.board.reads.card("deps")
    async with env.store.transaction() as db:
        await telemetry.record(db, run_record(card_id=card.id, cost_usd=1.0))
    await clock.tick(MONDAY_9 + 7 * 86400)
    assert "paused: its cards spent $1.00" in (await said(env.store))[-1]
    paused = await env.board.routines.get(made.id)
    assert (paused.state, paused.pause_cause) == ("paused", "budget")
    # It paused itself: it waits in the inbox, with its ways.
    inbox = (await env.one(msg("/inbox"))).text
    assert f"/routine resume {made.id}, /routine delete {made.id}" in inbox


async def test_the_loop_sleeps_until_the_next_routine_and_wakes_when_told(env: Env) -> None:
    await env.card("deps")
    await routine(env.board, "monday 09:00", "/start deps")
    now = [MONDAY_9 - 30]
    slept: list[float] = []
    stop = asyncio.Event()

    async def sleep(seconds: float, wake: asyncio.Event) -> None:
        slept.append(seconds)
        now[0] += seconds
        if len(slept) == 2:
            stop.set()

    clock = RoutineClock(env.chat, clock=lambda: now[0], sleep=sleep)
    await clock.run(stop)
    assert slept[0] == 30 and await env.phase("deps") is not Phase.PLANNED


async def test_why_a_routine_paused_or_stopped_is_kept_in_the_bots_language(
    store, tmp_path
) -> None:
    from tests.chat.conftest import make_env

    env = make_env(store, tmp_path, locale="de")
    failing = await routine(env.board, "monday 09:00", "/start gone")  # no such card
    clock = RoutineClock(env.chat)
    for week in range(3):
        await clock.tick(MONDAY_9 + week * 7 * 86400)
    paused = await env.board.routines.get(failing.id)
    assert (paused.state, paused.pause_cause) == ("paused", "failures")
    assert paused.why == "ihre letzten 3 Läufe schlugen fehl: keine Karte 'gone'"
    inbox = (await env.one(msg("/inbox"))).text
    assert f"⏰ Routine #{failing.id} /start gone: ihre letzten 3 Läufe schlugen fehl" in inbox
    # An owner's pause, and an owner removed since: German too.
    await env.card("deps")
    mine = await routine(env.board, "monday 09:00", "/start deps")
    await env.said(msg(f"/routine pause {mine.id}"))
    listed = (await env.one(msg("/routines"))).text
    assert (
        f"#{mine.id} /start deps — monday 09:00 (Europe/Berlin); pausiert: von xmpp:owner@"
        in listed
    )
    gone = await routine(env.board, "monday 09:00", "/start deps")
    later = RoutineClock(ChatIntake(env.board, owners=["other@example.org"], locale="de"))
    await later.tick(MONDAY_9 + 5 * 7 * 86400)
    stopped = await env.board.routines.get(gone.id)
    assert stopped.why == "xmpp:owner@example.org ist kein Owner mehr"
    for english in ("runs failed", "no card", "paused by", "no longer an owner"):
        assert english not in inbox + listed + stopped.why
