"""Requests: a requester asks, an owner decides by /accept, 👍, "yes" (or declines)."""

from __future__ import annotations

import pytest

from chatbot.domain.phases import Phase
from chatbot.store import chat as chat_store
from chatbot.store.chat import OutboxRow

from .conftest import OTHER_ROOM, REQUESTER, ROOM, STRANGER, Env, dm, msg, react


async def _request(env: Env, text: str = "/start login", *, chat=ROOM) -> OutboxRow:
    """The requester asks; the request message is delivered as 'bot-req'."""
    row = await env.one(msg(text, REQUESTER, chat=chat))
    await env.sent(row, "bot-req")
    return row


async def _state(env: Env, request_id: int = 1) -> str:
    request = await chat_store.get_request(env.store.reader, request_id)
    assert request is not None
    return request.state


async def test_a_requesters_start_becomes_a_posted_request(env: Env) -> None:
    card = await env.card("login")
    command = msg("/start login", REQUESTER)
    row = await env.one(command)
    assert row.purpose == "request" and row.request_id == 1 and row.card_id == card.id
    assert row.reply_to == command.envelope.message_id and row.room == ROOM.id
    assert "New request #1:" in row.text and "/accept 1" in row.text and "/start login" in row.text
    request = await chat_store.get_request(env.store.reader, 1)
    assert request is not None
    assert (request.requester, request.command, request.argument, request.state) == (
        "xmpp:req@example.org",
        "start",
        "login",
        "pending",
    )
    assert await env.phase("login") is Phase.PLANNED and await env.jobs() == []
    status = (await env.one(msg("/status"))).text
    assert "#1 /start login — xmpp:req@example.org" in status


@pytest.mark.parametrize(
    "decide",
    [
        lambda: msg("/accept 1"),
        lambda: react("bot-req", "👍"),
        lambda: react("bot-req", "👍🏽"),  # a skin tone is still a thumbs up
        lambda: msg("yes", reply_to="bot-req"),
        lambda: msg("Ja!", reply_to="bot-req"),
        lambda: msg("ok, go ahead", reply_to="bot-req"),
    ],
)
async def test_owner_accepts(env: Env, decide) -> None:
    await env.card("login")
    await _request(env)
    row = await env.one(decide())
    assert row.text.startswith("Request #1 accepted by xmpp:owner@example.org.")
    assert await env.phase("login") is Phase.OPERATOR_RUNNING
    assert [j.kind for j in await env.jobs()] == ["operator"]
    assert await _state(env) == "accepted"
    view = await env.board.reads.view("login")
    assert view.events[-1].actor == "xmpp:owner@example.org"
    assert view.events[-1].reason == "request #1 by xmpp:req@example.org"


@pytest.mark.parametrize(
    "decide",
    [
        lambda: msg("/decline 1"),
        lambda: react("bot-req", "👎"),
        lambda: msg("no", reply_to="bot-req"),
        lambda: msg("Nein.", reply_to="bot-req"),
    ],
)
async def test_owner_declines(env: Env, decide) -> None:
    await env.card("login")
    await _request(env)
    row = await env.one(decide())
    assert row.text == "Request #1 declined by xmpp:owner@example.org."
    assert await env.phase("login") is Phase.PLANNED and await env.jobs() == []
    assert await _state(env) == "declined"


async def test_the_first_decision_wins(env: Env) -> None:
    await env.card("login")
    await _request(env)
    await env.one(msg("/decline 1"))
    row = await env.one(react("bot-req", "👍"))
    assert row.text == "Request #1 was already declined by xmpp:owner@example.org."
    assert await env.phase("login") is Phase.PLANNED


async def test_accept_refused_by_the_board_leaves_the_request_open(env: Env) -> None:
    await env.card("login")
    await _request(env)
    await env.one(msg("/archive login"))  # the card moved on meanwhile
    row = await env.one(msg("/accept 1"))
    assert "archived" in row.text and row.purpose == "refusal"
    assert await _state(env) == "pending"
    assert "declined" in (await env.one(msg("/decline 1"))).text


async def test_unclear_reply_to_a_request_decides_nothing(env: Env) -> None:
    await env.card("login")
    await _request(env)
    assert await env.said(msg("hmm, what for?", reply_to="bot-req")) == []
    assert await _state(env) == "pending"


async def test_accept_of_an_unknown_request(env: Env) -> None:
    assert (await env.one(msg("/accept 99"))).text == "There is no request #99."


async def test_draft_request_starts_the_dialogue_in_the_requesters_chat(env: Env) -> None:
    row = await env.one(dm("/draft a login page", REQUESTER))
    assert row.purpose == "request" and row.target_kind == "person" and row.room == REQUESTER.id
    await env.sent(row, "bot-req")
    rows = await env.said(msg("/accept 1"))
    card = await env.board.reads.card("draft-1")
    assert card.phase is Phase.DRAFT_RUNNING
    assert card.data.origin == {
        "transport": "xmpp",
        "target_kind": "person",
        "target": REQUESTER.id,
    }
    # The owner is answered in the room; the requester's chat hears the decision.
    reply, told = sorted(rows, key=lambda r: r.purpose)
    assert reply.room == ROOM.id and "draft-1" in reply.text
    assert (told.purpose, told.target_kind, told.room) == (
        "request_decided",
        "person",
        REQUESTER.id,
    )
    assert told.reply_to == "bot-req" and "accepted" in told.text


async def test_deciding_in_the_same_chat_tells_it_once(env: Env) -> None:
    await env.card("login")
    await _request(env)
    rows = await env.said(msg("/decline 1"))
    assert [r.room for r in rows] == [ROOM.id]


async def test_deciding_from_another_room_tells_the_requesters_room(env: Env) -> None:
    await env.card("login")
    await _request(env)
    rows = await env.said(msg("/decline 1", chat=OTHER_ROOM))
    assert sorted(r.room for r in rows) == sorted([OTHER_ROOM.id, ROOM.id])


async def test_requester_asking_for_an_unknown_card_gets_close_slugs(env: Env) -> None:
    await env.card("login")
    row = await env.one(msg("/start logn", REQUESTER))
    assert "login" in row.text and row.request_id is None
    assert await chat_store.get_request(env.store.reader, 1) is None


async def test_requester_asking_for_an_impossible_move_is_told_at_once(env: Env) -> None:
    await env.card("login", Phase.DEPLOYED)
    row = await env.one(msg("/start login", REQUESTER))
    assert "deployed" in row.text and row.purpose == "refusal"
    assert await chat_store.get_request(env.store.reader, 1) is None


async def test_only_owners_decide(env: Env) -> None:
    await env.card("login")
    await _request(env)
    assert "Only an owner" in (await env.one(react("bot-req", "👍", REQUESTER))).text
    assert "Only an owner" in (await env.one(msg("yes", REQUESTER, reply_to="bot-req"))).text
    assert "may not" in (await env.one(react("bot-req", "👍", STRANGER))).text
    assert await env.said(msg("yes", STRANGER, reply_to="bot-req")) == []  # told once an hour
    assert await _state(env) == "pending"
