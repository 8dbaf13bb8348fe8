"""Reactions on the bot's card messages, looked up in the reaction table."""

from __future__ import annotations

import pytest

from chatbot.chat import reactions
from chatbot.domain.phases import Kind, Phase
from chatbot.transports.base import Envelope, IncomingReaction

from .conftest import ROOM, STRANGER, Env, react


async def _card_message(env: Env, slug: str = "login", phase: Phase = Phase.PLANNED, **fields):
    card = await env.card(slug, phase, **fields)
    await env.posted("bot-card", card_id=card.id, purpose="card:build_failed")
    return card


@pytest.mark.parametrize(
    "key, phase, fields, after, job",
    [
        ("🔁", Phase.FAILED, {"failure_stage": "builder"}, Phase.BUILDING, "builder"),
        ("🔁", Phase.FAILED, {"failure_stage": "review"}, Phase.REVIEWING, "reviewer"),
        ("✂️", Phase.PLANNING_WITH_FEEDBACK, {}, Phase.SPLIT_REQUESTED, "planner"),
        ("✂", Phase.PLANNED, {}, Phase.SPLIT_REQUESTED, "planner"),
        ("🗄️", Phase.PLANNED, {}, Phase.ARCHIVED, None),
        ("🗄", Phase.FAILED, {}, Phase.ARCHIVED, None),
    ],
)
async def test_action_reactions(
    env: Env, key: str, phase: Phase, fields: dict, after: Phase, job: str | None
) -> None:
    await _card_message(env, phase=phase, **fields)
    row = await env.one(react("bot-card", key))
    assert await env.phase("login") is after, row.text
    assert [j.kind for j in await env.jobs()] == ([job] if job else [])
    assert row.reply_to == "bot-card" and row.room == ROOM.id


async def test_thumbs_up_on_a_limit_reached_card_splits_it(env: Env) -> None:
    await _card_message(env, phase=Phase.PLANNING_WITH_FEEDBACK, data={"limit_reached": True})
    await env.one(react("bot-card", "👍"))
    assert await env.phase("login") is Phase.SPLIT_REQUESTED


def _recommending(target: str) -> dict:
    """A card's data after an inspector's routing that waits for the owner."""
    routing = {
        "schema_version": 1,
        "mode": "route_next",
        "outcome": "recommendation",
        "recommended_action": target,
        "basis": [{"source": "board", "finding": "f"}],
        "summary": "s",
        "question": None,
        "required_action": None,
        "pending": True,
    }
    return {"inspection": routing}


@pytest.mark.parametrize(
    "target, phase, kind, after",
    [
        ("archived", Phase.PLANNED, Kind.INTENT, Phase.ARCHIVED),
        ("planned", Phase.PLANNED, Kind.INTENT, Phase.OPERATOR_RUNNING),
        ("building_heavy", Phase.FAILED, Kind.INTENT, Phase.OPERATOR_RUNNING),
        ("research_requested", Phase.PLANNED, Kind.RESEARCH, Phase.RESEARCH_REQUESTED),
    ],
)
async def test_thumbs_up_applies_a_routing_recommendation(
    env: Env, target: str, phase: Phase, kind: Kind, after: Phase
) -> None:
    await _card_message(env, phase=phase, kind=kind, data=_recommending(target))
    await env.one(react("bot-card", "👍"))
    card = await env.board.reads.card("login")
    assert card.phase is after
    assert card.data.inspection["pending"] is False
    assert card.data.inspection["applied_by"] == "xmpp:owner@example.org"


async def test_reviewing_recommendation_retries_a_failed_review(env: Env) -> None:
    await _card_message(
        env, phase=Phase.FAILED, failure_stage="review", data=_recommending("reviewing")
    )
    await env.one(react("bot-card", "👍"))
    assert await env.phase("login") is Phase.REVIEWING


async def test_recommendation_that_maps_to_no_action(env: Env) -> None:
    await _card_message(env, data=_recommending("reviewing"))
    row = await env.one(react("bot-card", "👍"))
    assert "cannot be applied automatically" in row.text
    card = await env.board.reads.card("login")
    assert card.phase is Phase.PLANNED and card.data.inspection["pending"] is True


async def test_refused_recommendation_keeps_it_pending(env: Env) -> None:
    await _card_message(env, phase=Phase.DEPLOYED, data=_recommending("planned"))
    row = await env.one(react("bot-card", "👍"))
    assert "deployed" in row.text and row.purpose == "refusal"
    assert (await env.board.reads.card("login")).data.inspection["pending"] is True


async def test_thumbs_down_dismisses_a_recommendation(env: Env) -> None:
    await _card_message(env, data=_recommending("archived"))
    row = await env.one(react("bot-card", "👎"))
    assert "dismissed" in row.text
    card = await env.board.reads.card("login")
    assert card.phase is Phase.PLANNED
    assert card.data.inspection["pending"] is False
    assert card.data.inspection["dismissed_by"] == "xmpp:owner@example.org"
    assert "nothing on this card to accept" in (await env.one(react("bot-card", "👍"))).text


async def test_nothing_to_accept_or_decline(env: Env) -> None:
    await _card_message(env)
    assert "nothing" in (await env.one(react("bot-card", "👍"))).text
    assert "nothing" in (await env.one(react("bot-card", "👎"))).text
    assert await env.phase("login") is Phase.PLANNED


async def test_refused_reaction_names_the_phase(env: Env) -> None:
    await _card_message(env)
    row = await env.one(react("bot-card", "🔁"))
    assert "planned" in row.text and "/retry" in row.text and "/start" in row.text


async def test_reactions_that_are_not_ours_are_ignored(env: Env) -> None:
    await _card_message(env, phase=Phase.FAILED)
    assert await env.said(react("someone-elses-message", "🗄️")) == []
    assert await env.said(react("bot-card", "🎉")) == []
    removed = IncomingReaction(
        envelope=Envelope(chat=ROOM, sender=None, message_id=""),
        target_id="bot-card",
        removed=frozenset({"🗄️"}),
    )
    assert await env.said(removed) == []
    assert await env.phase("login") is Phase.FAILED


async def test_reaction_on_a_message_without_a_card(env: Env) -> None:
    await env.posted("bot-help")
    assert (await env.one(react("bot-help", "🗄️"))).text == "This message is not about a card."


async def test_reactions_on_our_own_replies_work(env: Env) -> None:
    """A /status reply carries its card, so 🗄️ on it archives that card."""
    from .conftest import msg

    await env.card("login")
    row = await env.one(msg("/status login"))
    await env.sent(row, "bot-status")
    await env.one(react("bot-status", "🗄️"))
    assert await env.phase("login") is Phase.ARCHIVED


async def test_strangers_reaction_changes_nothing(env: Env) -> None:
    await _card_message(env, phase=Phase.FAILED)
    assert "may not" in (await env.one(react("bot-card", "🗄️", STRANGER))).text
    assert await env.said(react("bot-card", "🗄️", STRANGER)) == []
    assert await env.phase("login") is Phase.FAILED


def test_reaction_keys_are_normalised() -> None:
    for reaction in reactions.REACTIONS:
        assert reactions.lookup(reaction.shown) is reaction
        assert reactions.lookup(reaction.shown.replace("\ufe0f", "")) is reaction
    assert reactions.lookup("👍🏿") is reactions.lookup("👍")
    assert reactions.lookup("🎉") is None
    assert {r.option for r in reactions.REACTIONS if r.option} == {1, 2, 3, 4}


async def test_status_says_what_a_thumbs_up_would_do(env: Env) -> None:
    from .conftest import msg

    await env.card("a", data=_recommending("archived"))
    await env.card("b", Phase.PLANNING_WITH_FEEDBACK, data={"limit_reached": True})
    assert "recommends 'archived': 👍 applies it" in (await env.one(msg("/status a"))).text
    assert "/split b or ✂️" in (await env.one(msg("/status b"))).text
