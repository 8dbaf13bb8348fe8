"""A working agent's questions on the real store and board (board.asks), on SQLite and
PostgreSQL: asked, answered, refused, expired, closed with the run."""

from __future__ import annotations

import asyncio
import time

import pytest

from chatbot.board import AlreadyAnswered, BoardService, waiting
from chatbot.board import inbox as board_inbox
from chatbot.board.agent_asks import (
    AgentInputRefused,
    NotAgentQuestion,
    RunOver,
    TooManyQuestions,
)
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.why import HoldKind
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.store.cards import Card
from chatbot.store.jobs import Job


async def running(board: BoardService, slug: str, kind: str = "builder") -> tuple[Job, Card]:
    """A card in building with its builder job claimed by a worker."""
    async with board.store.transaction() as db:
        card = await card_store.create(
            db, slug, Kind.INTENT, Phase.BUILDING, actor="test", title=slug
        )
        await job_store.enqueue(db, kind=kind, lane="light", card_id=card.id)
        job = await job_store.claim(db, "light", "w1", 60, host="hostA")
    assert job is not None and job.card_id == card.id
    return job, card


async def events(board: BoardService, card: Card) -> list[tuple[str, str, str]]:
    rows = await board.store.reader.fetchall(
        "SELECT action, actor, reason FROM events WHERE card_id = ? ORDER BY seq", (card.id,)
    )
    return [(r[0], r[1], r[2]) for r in rows]


@pytest.mark.asyncio
async def test_ask_answer_and_the_card_stays_building(board: BoardService):
    job, card = await running(board, "alpha")
    asked = await board.asks.ask(job, card, "Which port?\nThe old one is taken.", ["8080", "9090"])
    assert asked.kind == "agent" and asked.job_id == job.id and asked.state == "open"
    assert asked.options == ["8080", "9090"]
    assert ("agent_asked", "builder", "the builder asks: Which port?") in await events(board, card)
    # It waits in the inbox and holds /why, with /answer as the way.
    items = [i for i in await board_inbox.inbox(board) if i.slug == "alpha"]
    assert [(i.kind, i.text, i.options) for i in items] == [
        ("question", "Which port?\nThe old one is taken.", ("8080", "9090"))
    ]
    assert items[0].ways == ("/answer alpha <text>",)
    why = await board_inbox.why(board, "alpha")
    assert why.hold.kind is HoldKind.QUESTION
    answered = await board.asks.answer(asked.id, "9090", actor="xmpp:o@x.org", via="option")
    assert (answered.state, answered.answer, answered.answered_by, answered.answered_via) == (
        "answered",
        "9090",
        "xmpp:o@x.org",
        "option",
    )
    [state] = await board.asks.states([asked.id])
    assert state.answer == "9090"
    assert (await board.reads.card("alpha")).phase is Phase.BUILDING
    assert ("agent_answered", "xmpp:o@x.org", "answered: 9090 (to: Which port?)") in (
        await events(board, card)
    )
    with pytest.raises(AlreadyAnswered):
        await board.asks.answer(asked.id, "8080", actor="xmpp:o@x.org", via="reply")
    assert [i for i in await board_inbox.inbox(board) if i.slug == "alpha"] == []


@pytest.mark.asyncio
async def test_a_few_questions_beside_the_cards_own_and_no_more(board: BoardService):
    job, card = await running(board, "beta")
    # The card's own question (another kind) may wait beside them: the partial index.
    async with board.store.transaction() as db:
        own = await question_store.ask(db, card.id, "operator", "Which database?", [])
    first = await board.asks.ask(job, card, "one?", [])
    await board.asks.ask(job, card, "two?", [])
    await board.asks.ask(job, card, "three?", [])
    with pytest.raises(TooManyQuestions, match="3 of your questions wait"):
        await board.asks.ask(job, card, "four?", [])
    # A pipeline question asked later supersedes the card's own, never the agent's.
    async with board.store.transaction() as db:
        await question_store.ask(db, card.id, "operator", "Which cache?", [])
    open_rows = await question_store.open_of_card(board.store.reader, card.id)
    assert [q.text for q in open_rows] == ["one?", "two?", "three?", "Which cache?"]
    assert (await question_store.get(board.store.reader, own.id)).state == "cancelled"
    # One answered: one more may be asked.
    await board.asks.answer(first.id, "yes", actor="o", via="web")
    await board.asks.ask(job, card, "four?", [])
    # The card's view and board list show one question, not one row per question.
    assert (await board.reads.view("beta")).open_question.text == "two?"


@pytest.mark.asyncio
async def test_ask_refused_after_the_run_and_from_another_cards_run(board: BoardService):
    job, card = await running(board, "gamma")
    other_job, other = await running(board, "delta")
    with pytest.raises(RunOver, match="another card"):
        await board.asks.ask(other_job, card, "May I?", [])
    async with board.store.transaction() as db:
        await job_store.complete(db, job.id, "w1", result="build_committed")
    with pytest.raises(RunOver, match="this run is over"):
        await board.asks.ask(job, card, "Still there?", [])
    with pytest.raises(RunOver):
        await board.asks.propose(job, card, "Later", "Do it later", "")
    assert await question_store.open_of_card(board.store.reader, card.id) == []


@pytest.mark.asyncio
async def test_bad_input_is_refused_whole_with_what_to_change(board: BoardService):
    job, card = await running(board, "eps")
    with pytest.raises(AgentInputRefused, match="102400 characters; at most 4000"):
        await board.asks.ask(job, card, "x" * 102_400, [])
    with pytest.raises(AgentInputRefused, match="50 options given; at most 4"):
        await board.asks.ask(job, card, "Pick", [f"o{n}" for n in range(50)])
    with pytest.raises(AgentInputRefused, match="the question is empty"):
        await board.asks.ask(job, card, "\x1b\x00\x07 \t", [])
    with pytest.raises(AgentInputRefused, match="option 2 holds a line break"):
        await board.asks.ask(job, card, "Pick", ["a", "b\x1b[31m"])
    with pytest.raises(AgentInputRefused, match="option 1 has 81 characters"):
        await board.asks.ask(job, card, "Pick", ["o" * 81])
    with pytest.raises(AgentInputRefused, match="two options are the same"):
        await board.asks.ask(job, card, "Pick", ["Yes", "yes "])
    with pytest.raises(AgentInputRefused, match="a list"):
        await board.asks.ask(job, card, "Pick", "yes")  # type: ignore[arg-type]
    # Nothing of those was kept; control characters in the text are dropped.
    assert await question_store.open_of_card(board.store.reader, card.id) == []
    asked = await board.asks.ask(job, card, "Welche\x1b[2J Farbe?\r\nBlau\x07 oder Grün?", [])
    assert asked.text == "Welche[2J Farbe?\nBlau oder Grün?"


@pytest.mark.asyncio
async def test_expire_and_close_for_job(board: BoardService):
    job, card = await running(board, "zeta")
    late = await board.asks.ask(job, card, "Now?", ["yes", "no"])
    expired = await board.asks.expire(late.id, "nobody answered within 15 minutes")
    assert expired is not None and expired.state == "cancelled"
    assert expired.closed_reason == "nobody answered within 15 minutes"
    assert await board.asks.expire(late.id, "again") is None
    with pytest.raises(AlreadyAnswered):
        await board.asks.answer(late.id, "yes", actor="o", via="option")
    a = await board.asks.ask(job, card, "A?", [])
    b = await board.asks.ask(job, card, "B?", [])
    await board.asks.answer(a.id, "fine", actor="o", via="reply")
    closed = await board.asks.close_for_job(job, "the run had ended")
    assert [(q.id, q.state, q.closed_reason) for q in closed] == [
        (b.id, "cancelled", "the run had ended")
    ]
    assert await board.asks.close_for_job(job, "again") == []
    history = await events(board, card)
    assert ("agent_ask_closed", "system", "question closed: B? (the run had ended)") in history
    assert (await board.reads.card("zeta")).phase is Phase.BUILDING


@pytest.mark.asyncio
async def test_the_inbox_says_an_agents_words_without_tricks(board: BoardService):
    job, card = await running(board, "iota")
    await board.asks.ask(job, card, "Ping @room\u202e?", ["a"])
    [item] = [i for i in await board_inbox.inbox(board) if i.slug == "iota"]
    assert item.text == "Ping @\u200broom\\u202e?"


@pytest.mark.asyncio
async def test_the_pipelines_answer_refuses_an_agents_question(board: BoardService):
    job, card = await running(board, "eta")
    await board.asks.ask(job, card, "Which?", [])
    with pytest.raises(Exception, match="waits on its running agent's question"):
        await board.answer("eta", "this", actor="o")
    async with board.store.transaction() as db:
        own = await question_store.ask(db, card.id, "operator", "Own?", [])
    with pytest.raises(NotAgentQuestion):
        await board.asks.answer(own.id, "no", actor="o", via="reply")


@pytest.mark.asyncio
async def test_an_answer_wakes_the_worker(board: BoardService, database, engine):
    """The worker finds an answer at its next wake-up, and the answer brings one: on
    PostgreSQL another process's answer wakes it (the answer commits with a NOTIFY, as an
    approval's decision does); on SQLite (one host) the commit hook of the process."""
    job, card = await running(board, "theta")
    asked = await board.asks.ask(job, card, "Which?", ["a", "b"])
    other_host = engine == "postgresql"
    worker = (
        await Store.open(database.value, password_file=database.password_file)
        if other_host
        else board.store
    )
    try:
        if other_host:
            await worker.wait_listening()
        woken = asyncio.Event()
        worker.on_commit.append(woken.set)
        await board.asks.answer(asked.id, "b", actor="o", via="option")
        await asyncio.wait_for(woken.wait(), 10)
        [seen] = await BoardService(worker, board.repo).asks.states([asked.id])
        assert (seen.state, seen.answer) == ("answered", "b")
    finally:
        if other_host:
            await worker.close()


@pytest.mark.asyncio
async def test_a_pending_proposal_waits_in_the_inbox_until_decided(board: BoardService):
    job, card = await running(board, "kappa")
    made = await board.asks.propose(job, card, "Cache @all", "Make it fast.", "")
    items = [i for i in await board_inbox.inbox(board) if i.kind == "proposal"]
    assert [(i.slug, i.text, i.ways) for i in items] == [
        (
            "kappa",
            f"proposal-{made.id} (cache-all): Cache @\u200ball",
            (f"/confirm proposal-{made.id}", f"/cancel proposal-{made.id}"),
        )
    ]
    page = await board_inbox.inbox_page(board, limit=1)
    assert page.count == len(await board_inbox.inbox(board))
    assert await waiting.inbox_count(board.store.reader, time.time()) == page.count
    await board.asks.refuse(made.id, actor="o")
    assert [i for i in await board_inbox.inbox(board) if i.kind == "proposal"] == []
    assert await waiting.inbox_count(board.store.reader, time.time()) == page.count - 1
