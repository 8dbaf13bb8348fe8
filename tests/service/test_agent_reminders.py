"""A working agent's question is reminded like the card's own (issue 38): a reply to its
post, its words inert, /answer named; none once it is answered or closed. A real store
(SQLite and PostgreSQL), the real notifier and reminders, a chosen moment: no sleeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.domain.phases import Kind, Phase
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from tests.service.clock import Clock, local
from tests.service.test_reminders import AFTER, Bot


@pytest.fixture
async def bot(database, tmp_path: Path):
    opened = await Bot(database, tmp_path, Clock(local(0, 12))).open()
    yield opened
    await opened.close()


async def agent_asks(bot: Bot, slug: str, text: str):
    async with bot.store.transaction() as db:
        card = await card_store.create(db, slug, Kind.INTENT, Phase.BUILDING, actor="t")
        await job_store.enqueue(db, kind="builder", lane="light", card_id=card.id)
        job = await job_store.claim(db, "light", "w1", 60, host="h")
    assert job is not None and job.card_id == card.id
    question = await bot.board.asks.ask(job, card, text, ["yes", "no"])
    await bot.notifier.agent_asked(card, question)
    await bot.send_all()
    return job, question


async def test_an_agents_question_is_reminded_inert_as_a_reply(bot) -> None:
    _, question = await agent_asks(bot, "port", "Ping @room? **now**")
    async with bot.store.transaction() as db:
        found = await db.fetchone(
            "SELECT message_id FROM chat_messages WHERE question_id = ? AND purpose = 'question'",
            (question.id,),
        )
    assert await bot.reminders.remind(question.created_at + AFTER + 1) == 1
    [reminder] = await bot.reminders_sent()
    assert reminder.reply_to == found[0] and reminder.question_id == question.id
    assert reminder.text.startswith("⏰ port: the agent has waited 4h 00m for your answer")
    assert "```\nPing @\u200broom? **now**\n```" in reminder.text
    assert "/answer port <text>" in reminder.text


async def test_an_answered_or_closed_agent_question_is_not_reminded(bot) -> None:
    _, answered = await agent_asks(bot, "one", "First?")
    await bot.board.asks.answer(answered.id, "yes", actor="xmpp:owner@example.org", via="reply")
    job, closed = await agent_asks(bot, "two", "Second?")
    [gone] = await bot.board.asks.close_for_job(job, "the run had ended")
    assert gone.id == closed.id and gone.state == "cancelled"
    assert await bot.reminders.remind(closed.created_at + AFTER + 1) == 0
    assert await bot.reminders_sent() == []
