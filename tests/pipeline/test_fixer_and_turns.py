"""The fixer on the card's own profile and iteration limit, from `planned` too, with an
attempts counter; and claude builder turns bounded by the iteration limit in total
(issue 16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from tests.pipeline.harness import builder_answer, direct, review_answer, start
from tests.pipeline.room import open_room
from tests.pipeline.support import OWNER, jobs_of, kill_strays, run_idle

INTENT = "# Greeting module\n\nAdd `greet.py` with a `greet()` function.\n"
GREET = {"greet.py": "def greet():\n    return 'hi'\n"}
APPROVE = {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer(), "repeat": True}


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    yield
    for h in list(harnesses):
        kill_strays(h)


def option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


async def test_claude_builder_turns_are_bounded_by_the_limit_in_total(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("heavy")},
        # Three turns, then talk without finishing; the resumed run gets the two left.
        {"match": "COMMIT-MESSAGE", "cli": "claude", "answer": "Still on it.", "num_turns": 3},
        {"match": "Continue the same task", "cli": "claude", "answer": "More.", "num_turns": 2},
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.PLANNING_WITH_FEEDBACK, card.failure_detail
    builds = [c for c in h.calls() if c["cli"] == "claude" and "--resume" in c["argv"]]
    first = next(c for c in h.calls() if c["cli"] == "claude")
    # 5 turns in all (limit 5), not up to 5 x 5: the resumed run may only use what is left.
    assert [option(c["argv"], "--max-turns") for c in (first, *builds)] == ["5", "2"]
    assert option(builds[0]["argv"], "--resume") == first["session"]
    events = (await h.board.reads.view("greeting")).events
    assert "iteration limit 5 reached (2 answers without the commit-message block)" in (
        events[-1].reason
    )


async def test_a_claude_builder_that_uses_up_its_turns_on_resume_stops_there(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("heavy")},
        {"match": "COMMIT-MESSAGE", "cli": "claude", "answer": "Still on it.", "num_turns": 4},
        # One turn left; the agent wants three: claude itself ends at its limit.
        {"match": "Continue the same task", "cli": "claude", "answer": "More.", "num_turns": 3},
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.PLANNING_WITH_FEEDBACK
    claude = [option(c["argv"], "--max-turns") for c in h.calls() if c["cli"] == "claude"]
    assert claude == ["5", "1"]


async def test_the_fixer_may_start_from_planned_with_the_cards_lane(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "FIXER-QUESTION", "cli": "codex", "answer": "Reading the intent first."},
        {
            "match": "Continue the same task",
            "cli": "codex",
            "answer": builder_answer("Add greet()"),
            "files": GREET,
        },
        APPROVE,
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    room = open_room(h)
    assert "greeting: /fix — planned → fixer running." in await room.say("/fix greeting")
    await run_idle(h)

    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    assert card.fixer_attempts == 1 and card.pipeline_run_id
    fixer_job = (await jobs_of(h, card.id))[0]
    assert (fixer_job["kind"], fixer_job["lane"]) == ("fixer", "light")
    first, resumed = (c for c in h.calls() if c["cli"] == "codex")
    # The card's lane profile (it has none of its own yet: the default lane's).
    # A fixer is talked to: codex app-server, whose model is a `-c` setting.
    assert "app-server" in first["argv"] and 'model="gpt-5-codex-mini"' in first["argv"]
    assert 'model_reasoning_effort="medium"' in first["argv"]
    assert "came from the phase\n`planned`" in first["stdin"]
    assert "This is repair attempt 1 on this card." in first["stdin"]
    assert resumed["session"] == first["session"]  # the same thread, resumed
    assert "repair attempts: 1" in await room.say("/status greeting")


async def test_the_fixer_uses_the_cards_profile_and_limit_and_counts_attempts(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    ladder = [{"model": "claude-sonnet-4-5", "reasoning_effort": "high", "iteration_limit": 6}]
    turns = [
        {
            "match": "repair attempt 2",
            "cli": "claude",
            "answer": builder_answer("Fix"),
            "files": GREET,
        },
        # The first repair talks for all of its 6 turns without a fix.
        {"match": "FIXER-QUESTION", "cli": "claude", "answer": "Hmm.", "num_turns": 6},
        {"match": "OPERATOR-DECISION", "answer": direct("heavy", escalation=ladder)},
        # The builder runs out of turns, escalates to the ladder's step, then claims a
        # commit without changing a file: the card fails at the builder.
        {"match": "COMMIT-MESSAGE", "cli": "claude", "answer": "x", "num_turns": 9},
        {"match": "COMMIT-MESSAGE", "cli": "claude", "answer": builder_answer("Add greet()")},
        APPROVE,
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert (card.phase, card.failure_stage) == (Phase.FAILED, "builder")
    assert (card.model, card.reasoning_effort, card.iteration_limit) == (
        "claude-sonnet-4-5",
        "high",
        6,
    )

    await h.board.act("greeting", Action.FIX, actor=OWNER)
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert (card.phase, card.fixer_attempts) == (Phase.FIXER_FAILED, 1)
    assert "iteration limit 6 reached without a fix" in card.failure_detail
    fixer = next(c for c in h.calls() if "FIXER-QUESTION" in c["stdin"])
    # Not a [roles.fixer] profile: the card's own, as escalation left it, and its limit.
    assert option(fixer["argv"], "--model") == "claude-sonnet-4-5"
    assert option(fixer["argv"], "--effort") == "high"
    assert option(fixer["argv"], "--max-turns") == "6"
    assert "--resume" not in fixer["argv"]  # a fresh session, not the builder's

    await h.board.act("greeting", Action.RETRY, actor=OWNER)
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    assert card.fixer_attempts == 2
