"""Questions: answered by a reply, an option reaction, /answer, or a plain direct message."""

from __future__ import annotations

import asyncio

import pytest

from chatbot.domain.phases import Phase
from chatbot.store import questions as question_store

from .conftest import OWNER, REQUESTER, STRANGER, Env, dm, msg, react


async def _question(env: Env, slug: str = "login", options=None, message_id: str = "bot-q"):
    await env.card(slug, Phase.NEEDS_HUMAN)
    return await env.ask(
        slug, "OAuth or password?", options or ["OAuth", "password"], message_id=message_id
    )


async def _answered(env: Env, question_id: int = 1):
    question = await question_store.get(env.store.reader, question_id)
    assert question is not None
    return question


async def test_reply_to_the_question_message_answers_it(env: Env) -> None:
    await _question(env)
    reply = msg("Use OAuth with GitHub", reply_to="bot-q")
    row = await env.one(reply)
    question = await _answered(env)
    assert question.state == "answered" and question.answer == "Use OAuth with GitHub"
    assert question.answered_by == "xmpp:owner@example.org"
    assert await env.phase("login") is Phase.OPERATOR_RUNNING
    (job,) = await env.jobs()
    assert job.kind == "operator" and job.payload["answer"] == "Use OAuth with GitHub"
    assert row.reply_to == reply.envelope.message_id and "Answer recorded for login" in row.text


@pytest.mark.parametrize("key", ["2️⃣", "2\u20e3"])
async def test_option_reaction_answers_with_the_option_text(env: Env, key: str) -> None:
    await _question(env)
    row = await env.one(react("bot-q", key))
    assert (await _answered(env)).answer == "password"
    assert row.reply_to == "bot-q"
    assert await env.phase("login") is Phase.OPERATOR_RUNNING


async def test_option_beyond_the_questions_options(env: Env) -> None:
    await _question(env)
    row = await env.one(react("bot-q", "3️⃣"))
    assert row.text == "There is no option 3; the question has 2."
    assert (await _answered(env)).state == "open"


async def test_option_reaction_on_a_message_without_a_question(env: Env) -> None:
    card = await env.card("login")
    await env.posted("bot-note", card_id=card.id)
    assert "no question" in (await env.one(react("bot-note", "1️⃣"))).text


async def test_answer_command(env: Env) -> None:
    await _question(env)
    await env.one(msg("/answer login use OAuth"))
    assert (await _answered(env)).answer == "use OAuth"


async def test_answer_command_without_an_open_question(env: Env) -> None:
    await env.card("login")
    row = await env.one(msg("/answer login use OAuth"))
    assert row.text == "login has no open question. /why login says what it waits for."


async def test_plain_direct_message_answers_the_only_open_question(env: Env) -> None:
    await _question(env)
    await env.one(dm("OAuth, please"))
    assert (await _answered(env)).answer == "OAuth, please"


async def test_plain_direct_message_with_several_open_questions(env: Env) -> None:
    await _question(env, "a", message_id="q-a")
    await _question(env, "b", message_id="q-b")
    row = await env.one(dm("OAuth, please"))
    assert row.text.startswith("2 questions are open")
    assert [q.state for q in await env.board.reads.open_questions()] == ["open", "open"]


async def test_plain_direct_message_without_questions(env: Env) -> None:
    row = await env.one(dm("hello"))
    assert row.text == "I only understand commands; /help lists them."


async def test_plain_room_message_never_answers(env: Env) -> None:
    await _question(env)
    assert await env.said(msg("OAuth, please")) == []
    assert (await _answered(env)).state == "open"


async def test_second_answer_is_told_already_answered(env: Env) -> None:
    await _question(env)
    await env.one(msg("OAuth", reply_to="bot-q"))
    row = await env.one(react("bot-q", "2️⃣"))
    # The card and the question's words, never an internal question number.
    assert row.text == (
        "The question on login (OAuth or password?) was already answered by xmpp:owner@example.org."
    )
    assert "#" not in row.text
    assert (await _answered(env)).answer == "OAuth"
    row = await env.one(msg("/answer login password"))
    assert row.text == "login has no open question. /why login says what it waits for."


async def test_concurrent_answers_first_one_wins(env: Env) -> None:
    await _question(env)
    first, second = msg("OAuth", reply_to="bot-q"), msg("password", reply_to="bot-q")
    await env.new()
    await asyncio.gather(env.chat.handle(first), env.chat.handle(second))
    rows = await env.new()
    question = await _answered(env)
    assert question.answer in ("OAuth", "password")
    texts = sorted(r.text for r in rows)
    assert texts[0].startswith("Answer recorded") and "already answered" in texts[1]
    assert len(await env.jobs()) == 1


async def test_answer_to_a_superseded_question(env: Env) -> None:
    await _question(env)
    await env.ask("login", "Newer question?", [], message_id="bot-q2")
    row = await env.one(msg("OAuth", reply_to="bot-q"))
    assert row.text == "The question on login (OAuth or password?) is no longer open."


async def test_strangers_reply_is_ignored_and_told_once(env: Env) -> None:
    await _question(env)
    row = await env.one(msg("password!", STRANGER, reply_to="bot-q"))
    assert "may not" in row.text
    assert await env.said(msg("password!!", STRANGER, reply_to="bot-q")) == []
    assert await env.said(react("bot-q", "1️⃣", STRANGER)) == []
    assert (await _answered(env)).state == "open"
    assert await env.phase("login") is Phase.NEEDS_HUMAN


async def test_requester_cannot_answer(env: Env) -> None:
    await _question(env)
    assert "Only an owner" in (await env.one(msg("OAuth", REQUESTER, reply_to="bot-q"))).text
    assert "Only an owner" in (await env.one(dm("OAuth", REQUESTER))).text
    assert (await _answered(env)).state == "open"


async def test_answer_in_a_direct_chat_to_a_room_question(env: Env) -> None:
    """The question was posted in a room; the owner replies to it from there, or answers by DM."""
    await _question(env)
    await env.one(dm("password", OWNER))
    assert (await _answered(env)).answer == "password"


async def test_an_answer_longer_than_the_limit_is_refused_and_the_question_stays_open(
    env: Env,
) -> None:
    await _question(env)
    row = await env.one(dm("x" * 4001))
    assert "too long" in row.text
    assert [q.state for q in await env.board.reads.open_questions()] == ["open"]
