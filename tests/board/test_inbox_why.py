"""/inbox and /why on the real store and board, on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from typing import Any

import pytest

from chatbot.board import BoardService, UnknownCard
from chatbot.board import inbox as board_inbox
from chatbot.board.routines import new_routine
from chatbot.chat import render_inbox
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.schedules import parse
from chatbot.domain.transitions import Action
from chatbot.domain.why import HoldKind
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import jobs as job_store
from chatbot.store import proposals as proposal_store
from chatbot.store import questions as question_store
from chatbot.store import talk as talk_store
from chatbot.store import workers as worker_store

REQUESTER = "xmpp:req@example.org"
# A card's own budget stopped the run of the card's first version (board/budget.py).
STOP = {
    "scope": "card",
    "spent": 1.5,
    "limit": 1.0,
    "budget": 1.0,
    "allowances": 0,
    "key": "lanes.light.budget_usd_per_card",
    "role": "builder",
    "version": 1,
}


def planned_child(slug: str) -> dict[str, Any]:
    """One child of a split plan as the card keeps it (board/split_plan.py dump)."""
    path = f"docs/intent/{slug}.md"
    return {
        "slug": slug,
        "title": slug,
        "intent_path": path,
        "blocked_by": [],
        "fields": {},
        "intent_markdown": f"# {slug}\n",
    }


async def card(board: BoardService, slug: str, phase: Phase, **fields: Any):
    async with board.store.transaction() as db:
        return await card_store.create(
            db, slug, Kind.INTENT, phase, actor="test", title=slug, **fields
        )


async def one_of_each(board: BoardService) -> None:
    """A board with one item of every waiting kind, made oldest first in this order."""
    db_tx = board.store.transaction
    asked = await card(board, "asked", Phase.NEEDS_HUMAN)
    async with db_tx() as db:
        await question_store.ask(db, asked.id, "operator", "Which database?", [])
        await chat_store.add_request(db, REQUESTER, "xmpp", "start", "wish")
    await card(board, "costly", Phase.FAILED, failure_stage="builder", data={"budget_stop": STOP})
    asking = await card(board, "asking", Phase.BUILDING)
    async with db_tx() as db:
        job, _ = await job_store.enqueue(db, kind="builder", lane="light", card_id=asking.id)
        await talk_store.add(db, job.id, asking.id, "approval", "rm -rf build")
    await card(board, "paused", Phase.INTERRUPTED)
    await card(board, "approved", Phase.READY_FOR_DEPLOYMENT, deployment_status="pending")
    await card(board, "broken", Phase.FAILED, failure_stage="review")
    plan = [planned_child("part-a"), planned_child("part-b")]
    planned = await card(board, "report", Phase.SPLIT_PLAN_WAITING, data={"split_plan": plan})
    async with db_tx() as db:
        await question_store.ask(db, planned.id, "split_plan", "two parts", [])
    limited = await card(board, "limited", Phase.BUILDING)
    async with db_tx() as db:
        await job_store.enqueue(db, kind="builder", lane="heavy", card_id=limited.id)
        job = await job_store.claim(db, "heavy", "w1", 60, host="hostA")
        assert job is not None and job.card_id == limited.id
        reason = "codex: quota or rate limit: You've hit your usage limit."
        await job_store.wait(db, job.id, "w1", time.time() + 3600, reason)
    # A follow-up card the agent of "asking" proposed (board/agent_asks.py).
    async with db_tx() as db:
        await proposal_store.add(db, asking.id, None, "Cache it", "Faster.", "", "cache-it")


@pytest.mark.asyncio
async def test_inbox_lists_one_of_each_kind_oldest_first(board: BoardService):
    await one_of_each(board)
    await card(board, "moving", Phase.PLANNED)  # waits for nobody's answer: not listed
    # A routine that paused itself (chat/routine_clock.py): the newest item.
    schedule = parse("every day 09:00", "UTC", time.time(), once=False)
    room = {"transport": "xmpp", "target": "ops@muc", "target_kind": "room"}
    made = await board.routines.add(new_routine(schedule, "/start x", "o", room, time.time()))
    why = "its last 3 runs failed: no card 'x'"
    await board.routines.set_state(made.id, "paused", why, now=time.time() + 60, cause="failures")
    items = await board_inbox.inbox(board)
    assert [(i.kind, i.slug or i.request_id) for i in items] == [
        ("question", "asked"),
        ("request", 1),
        ("budget", "costly"),
        ("approval", "asking"),
        ("interrupted", "paused"),
        ("deploy", "approved"),
        ("failed", "broken"),
        ("split_plan", "report"),
        ("quota", "limited"),
        ("proposal", "asking"),
        ("routine", None),
    ]
    # One of every kind the inbox knows.
    assert {i.kind for i in items} == {
        v for k, v in vars(board_inbox.InboxKind).items() if not k.startswith("_")
    }
    ways = {i.kind: i.ways for i in items}
    assert ways["question"] == ("/answer asked <text>",)
    assert ways["request"] == ("/accept 1", "/decline 1")
    assert ways["budget"] == ("/allow costly", "/retry costly")
    assert ways["approval"] == ("👍", "/approve asking", "/deny asking <reason>")
    assert ways["interrupted"] == ("/steer paused <text>", "/fix paused", "/cancel paused")
    assert ways["deploy"] == ("/deploy approved",)
    assert ways["failed"] == ("/retry broken", "/fix broken")
    assert ways["split_plan"] == ("👍", "/confirm report", "/answer report <reason>")
    assert ways["proposal"][1].startswith("/cancel proposal-")
    assert ways["quota"] == ("/cancel limited",)
    assert ways["routine"] == ("/routine resume 1", "/routine delete 1")
    text = render_inbox.inbox(items, "en")
    assert text.splitlines()[0] == "Waiting for you (11), oldest first:"
    assert "reply to its message or /answer asked <text>" in text
    assert "asking: its agent proposed a follow-up card since" in text
    assert "(cache-it): Cache it — /confirm proposal-1, /cancel proposal-1" in text
    assert render_inbox.inbox(items, "de").startswith("Wartet auf dich (11)")


@pytest.mark.asyncio
async def test_a_requester_sees_only_their_own_requests(board: BoardService):
    await one_of_each(board)
    async with board.store.transaction() as db:
        await chat_store.add_request(db, "xmpp:other@example.org", "xmpp", "start", "x")
    items = await board_inbox.inbox(board, REQUESTER)
    assert [(i.kind, i.request_id) for i in items] == [("request", 1)]
    assert "an owner decides it" in render_inbox.inbox(items, "en", own=True)


@pytest.mark.asyncio
async def test_an_empty_inbox_says_so(board: BoardService):
    await card(board, "idle", Phase.PLANNED)
    assert await board_inbox.inbox(board) == []
    assert render_inbox.inbox([], "en") == "Nothing waits for you."


async def why(board: BoardService, slug: str) -> tuple[HoldKind, str]:
    found = await board_inbox.why(board, slug)
    return found.hold.kind, render_inbox.why(found, "en")


@pytest.mark.asyncio
async def test_why_a_question_and_answering_it(board: BoardService):
    asked = await card(board, "asked", Phase.NEEDS_HUMAN)
    async with board.store.transaction() as db:
        await question_store.ask(db, asked.id, "operator", "Which?", [])
    kind, text = await why(board, "asked")
    assert kind is HoldKind.QUESTION
    assert "waits for your answer to its question, open since" in text
    assert "Way on: /answer asked <text>." in text
    await board.answer("asked", "Postgres", actor="test")
    kind, text = await why(board, "asked")
    assert kind is not HoldKind.QUESTION


@pytest.mark.asyncio
async def test_why_budget_stop_and_allow(board: BoardService):
    await card(board, "costly", Phase.FAILED, failure_stage="builder", data={"budget_stop": STOP})
    kind, text = await why(board, "costly")
    assert kind is HoldKind.BUDGET_CARD and "/allow costly" in text
    await board.act("costly", Action.ALLOW, actor="test")
    assert (await why(board, "costly"))[0] is not HoldKind.BUDGET_CARD


@pytest.mark.asyncio
async def test_why_blocked_until_its_dependency_is_done(board: BoardService):
    first = await card(board, "first", Phase.BUILDING)
    await card(board, "second", Phase.PLANNED, blocked_by_ids=(first.id,))
    kind, text = await why(board, "second")
    assert kind is HoldKind.BLOCKED
    assert text == "second is blocked by first (building); it starts when they are done."
    async with board.store.transaction() as db:
        await db.execute("UPDATE cards SET phase = 'done' WHERE slug = 'first'")
    kind, text = await why(board, "second")
    assert kind is HoldKind.START and text.endswith("Way on: /start second.")
    await board.act("second", Action.START, actor="test")
    assert (await why(board, "second"))[0] is HoldKind.NO_WORKER


@pytest.mark.asyncio
async def test_why_split_parent_waits_for_children(board: BoardService):
    parent = await card(board, "parent", Phase.SPLIT)
    await card(board, "kid", Phase.BUILDING, parent_id=parent.id)
    kind, text = await why(board, "parent")
    assert kind is HoldKind.CHILDREN and "waiting for its children: kid (building)" in text


@pytest.mark.asyncio
async def test_why_no_worker_then_lane_then_running_then_lease_lost(board: BoardService):
    a = await card(board, "a", Phase.BUILDING)
    b = await card(board, "b", Phase.BUILDING)
    async with board.store.transaction() as db:
        await job_store.enqueue(db, kind="builder", lane="light", card_id=a.id)
        await job_store.enqueue(db, kind="builder", lane="light", card_id=b.id)
    kind, text = await why(board, "b")
    assert kind is HoldKind.NO_WORKER and "no worker has ever served lane light" in text
    async with board.store.transaction() as db:
        await worker_store.beat(db, "w1", host="hostA", process=None, lanes=["light"], lease_s=60)
    kind, text = await why(board, "b")
    assert kind is HoldKind.LANE
    assert "behind 1 job: a" in text
    async with board.store.transaction() as db:
        claimed = await job_store.claim(db, "light", "w1", 60, host="hostA")
    assert claimed is not None and claimed.card_id == a.id
    assert (await why(board, "a"))[0] is HoldKind.RUNNING
    assert "behind 1 job: a" in (await why(board, "b"))[1]
    # The worker stops heartbeating: its registration runs out.
    async with board.store.transaction() as db:
        await worker_store.stopped(db, ["w1"])
    kind, text = await why(board, "a")
    assert kind is HoldKind.LEASE_LOST
    assert "worker w1 on hostA, which stopped heartbeating" in text
    # A builder's result is unknown: it is not run again, its card fails.
    assert "its result is unknown; no live worker is left to mark it failed" in text
    kind, text = await why(board, "b")
    assert kind is HoldKind.NO_WORKER and "last seen: hostA" in text
    # The named way: a live worker's round marks the orphaned run failed.
    async with board.store.transaction() as db:
        await worker_store.beat(db, "w2", host="hostB", process=None, lanes=["light"], lease_s=60)
    assert "a live worker's next round marks it failed" in (await why(board, "a"))[1]
    await board.failures.recover(())
    assert (await why(board, "a"))[0] is HoldKind.FAILED


@pytest.mark.asyncio
async def test_why_failed_interrupted_approval_deploy_done(board: BoardService):
    await card(board, "broken", Phase.FAILED, failure_stage="review")
    kind, text = await why(board, "broken")
    assert kind is HoldKind.FAILED
    assert text == "broken is held by its failed review stage. Way on: /retry broken, /fix broken."
    await board.act("broken", Action.RETRY, actor="test")
    assert (await why(board, "broken"))[0] is not HoldKind.FAILED
    await card(board, "paused", Phase.INTERRUPTED)
    assert (await why(board, "paused"))[0] is HoldKind.INTERRUPTED
    asking = await card(board, "asking", Phase.BUILDING)
    async with board.store.transaction() as db:
        job, _ = await job_store.enqueue(db, kind="builder", lane="light", card_id=asking.id)
        await talk_store.add(db, job.id, asking.id, "approval", "rm -rf build")
    kind, text = await why(board, "asking")
    assert kind is HoldKind.APPROVAL and "/approve asking, /deny asking <reason>" in text
    await card(board, "approved", Phase.READY_FOR_DEPLOYMENT, deployment_status="pending")
    kind, text = await why(board, "approved")
    assert kind is HoldKind.DEPLOY and text.endswith("Way on: /deploy approved.")
    await card(board, "shipped", Phase.DEPLOYED)
    assert await why(board, "shipped") == (
        HoldKind.DONE,
        "shipped is deployed: nothing holds it, it is finished.",
    )


@pytest.mark.asyncio
async def test_why_an_unknown_card(board: BoardService):
    with pytest.raises(UnknownCard):
        await board_inbox.why(board, "nope")


@pytest.mark.asyncio
async def test_why_a_quota_wait_is_not_a_failure_and_ends_by_itself(board: BoardService):
    limited = await card(board, "limited", Phase.BUILDING)
    async with board.store.transaction() as db:
        await worker_store.beat(db, "w1", host="hostA", process=None, lanes=["light"], lease_s=60)
        await job_store.enqueue(db, kind="builder", lane="light", card_id=limited.id)
        job = await job_store.claim(db, "light", "w1", 60, host="hostA")
        assert job is not None
        # What the worker does when the run met the provider's limit (pipeline/quota.py).
        await job_store.wait(db, job.id, "w1", time.time() + 600, "codex: quota or rate limit: 429")
    kind, text = await why(board, "limited")
    assert kind is HoldKind.QUOTA
    assert "waits for the provider's quota or rate limit, not for a fault of the work" in text
    assert text.endswith("(codex: 429).") and "Way on" not in text
    # Its time comes: it is an ordinary queued job again, which a worker takes.
    async with board.store.transaction() as db:
        await db.execute("UPDATE jobs SET not_before = ? WHERE id = ?", (time.time() - 1, job.id))
    assert (await why(board, "limited"))[0] is HoldKind.QUEUED


@pytest.mark.asyncio
async def test_inbox_shows_a_quota_wait_until_its_time(board: BoardService):
    limited = await card(board, "limited", Phase.BUILDING)
    async with board.store.transaction() as db:
        await job_store.enqueue(db, kind="builder", lane="light", card_id=limited.id)
        job = await job_store.claim(db, "light", "w1", 60, host="hostA")
        assert job is not None
        await job_store.wait(db, job.id, "w1", time.time() + 600, "codex: quota or rate limit: 429")
    [item] = await board_inbox.inbox(board)
    assert (item.kind, item.slug, item.ways) == ("quota", "limited", ("/cancel limited",))
    line = render_inbox.inbox([item], "en")
    assert "limited: its run met the provider's quota or rate limit (codex: 429)" in line
    assert "runs again by itself at" in line
    async with board.store.transaction() as db:
        await db.execute("UPDATE jobs SET not_before = ? WHERE id = ?", (time.time() - 1, job.id))
    assert await board_inbox.inbox(board) == []


@pytest.mark.asyncio
async def test_a_page_of_the_inbox_is_its_first_items_and_counts_them_all(board: BoardService):
    """What the web board's owner page reads: the oldest items of every kind, as the whole
    inbox lists them, and the count of all, ties in time ordered by slug as there."""
    await one_of_each(board)
    for n in range(7):
        # The later made, the earlier its slug.
        failed = await card(board, f"failed-{9 - n}", Phase.FAILED, failure_stage="builder")
        asks = await card(board, f"asks-{9 - n}", Phase.NEEDS_HUMAN)
        async with board.store.transaction() as db:
            await question_store.ask(db, asks.id, "operator", f"question {n}?", [])
            await chat_store.add_request(db, REQUESTER, "xmpp", "draft", f"idea {n}")
        if n % 2:  # one time for several: the slug orders them
            async with board.store.transaction() as db:
                await db.execute("UPDATE cards SET updated_at = 1.0 WHERE id = ?", (failed.id,))
                await db.execute(
                    "UPDATE questions SET created_at = 2.0 WHERE card_id = ?", (asks.id,)
                )
    async with board.store.transaction() as db:
        await db.execute("UPDATE cards SET updated_at = 1.0 WHERE slug = 'broken'")
    # Waits for nobody (it runs; nothing failed), or holds an item of its own: not listed.
    await card(board, "moving", Phase.PLANNED)
    quiet = await card(board, "quiet", Phase.NEEDS_HUMAN, failure_stage="review")
    await card(
        board,
        "stopped",
        Phase.NEEDS_HUMAN,
        failure_stage="review",
        data={"budget_stop": STOP},
    )
    everything = await board_inbox.inbox(board)
    assert quiet.slug not in {i.slug for i in everything}
    assert ("budget", "stopped") in {(i.kind, i.slug) for i in everything}
    assert [i.slug for i in everything[:5]] == [
        "broken",
        "failed-4",
        "failed-6",
        "failed-8",
        "asks-4",
    ]
    assert len(everything) == 10 + 3 * 7 + 1
    for limit in (1, 2, 3, 4, 5, 8, 20, len(everything) - 1, len(everything), 100):
        page = await board_inbox.inbox_page(board, limit)
        assert page.items == everything[:limit], limit
        assert page.count == len(everything), limit
    assert await board_inbox.inbox_page(board) == board_inbox.InboxPage(everything, len(everything))
