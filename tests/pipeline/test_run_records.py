"""What each run's telemetry records besides tokens and time (issue 16): its pipeline, the
reasoning effort it really ran with, the review decision it gave, and whether its answer
was accepted (a refused answer is not "ok")."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store import telemetry
from tests.pipeline.harness import builder_answer, direct, review_answer, start
from tests.pipeline.room import open_room
from tests.pipeline.support import OWNER, kill_strays, run_idle

INTENT = "# Greeting module\n\nAdd `greet.py` with a `greet()` function.\n"
GREET = {"greet.py": "def greet():\n    return 'hi'\n"}


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    yield
    for h in list(harnesses):
        kill_strays(h)


async def runs_of(h, slug: str) -> list[telemetry.RunRecord]:
    card = await h.board.reads.card(slug)
    return list(reversed(await telemetry.for_card(h.store.reader, card.id, limit=50)))


async def test_each_run_records_its_pipeline_effort_review_and_acceptance(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": "I would just build it."},  # refused
        {"match": "OPERATOR-DECISION", "exit_code": 1, "stderr": "boom"},  # no answer at all
        {"match": "OPERATOR-DECISION", "answer": direct()},
        {"match": "COMMIT-MESSAGE", "cli": "codex", "answer": builder_answer(), "files": GREET},
        {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer("reject", "No tests.")},
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    room = open_room(h)
    for _ in range(3):
        await h.board.act("greeting", Action.START, actor=OWNER)
        await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.PLANNING_WITH_FEEDBACK, card.failure_detail

    refused, failed, operator, builder, reviewer = await runs_of(h, "greeting")
    # The refused answer: the run went well, its answer did not count.
    assert (refused.outcome, refused.accepted) == ("ok", False)
    assert "operator's answer was rejected" in refused.rejection
    assert refused.shown_outcome.startswith("rejected: the operator's answer was rejected")
    # The run that gave no answer was never judged.
    assert failed.accepted is None and "status 1" in failed.outcome
    assert operator.accepted is True and builder.accepted is True
    # The reviewer's decision is on its run; a rejecting review is still an accepted answer.
    assert (reviewer.review_decision, reviewer.accepted) == ("reject", True)
    assert operator.review_decision is None and builder.review_decision is None
    # The effort each really ran with: the lane's for the codex builder; none given to
    # the claude reviewer (its default).
    assert (builder.reasoning_effort, builder.actual_reasoning_effort) == ("medium", "medium")
    assert (reviewer.reasoning_effort, reviewer.actual_reasoning_effort) == ("", None)
    # Each /start began a pipeline of its own; every run carries the one it ran in.
    pipelines = [run.pipeline_run_id for run in (refused, failed, operator, builder, reviewer)]
    assert len(set(pipelines[:3])) == 3 and pipelines[2:] == [card.pipeline_run_id] * 3

    status = await room.say("/status greeting")
    assert "operator (codex): rejected: the operator's answer was rejected" in status
    assert "reviewer (claude-sonnet-4-5-20250929): ok (reject)" in status
    assert "builder (gpt-5-codex-mini medium): ok" in status


async def test_an_escalated_builder_records_the_effort_of_its_step(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    ladder = [{"model": "claude-sonnet-4-5", "reasoning_effort": "high", "iteration_limit": 6}]
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("heavy", escalation=ladder)},
        {"match": "COMMIT-MESSAGE", "cli": "claude", "answer": "x", "num_turns": 9},
        {"match": "COMMIT-MESSAGE", "cli": "claude", "answer": builder_answer(), "files": GREET},
        {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer()},
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    assert (await h.board.reads.card("greeting")).phase is Phase.READY_FOR_DEPLOYMENT
    _, first, escalated, reviewer = await runs_of(h, "greeting")
    # The first builder ran out of turns: no answer to accept or refuse.
    assert first.accepted is None and "error_max_turns" in first.outcome
    assert (first.configured_model, first.actual_reasoning_effort) == ("claude-opus-4-1", None)
    # The heavy lane configures no effort; the ladder's step ran with "high".
    assert (escalated.configured_model, escalated.actual_reasoning_effort) == (
        "claude-sonnet-4-5",
        "high",
    )
    assert escalated.reasoning_effort == ""
    assert escalated.accepted is True and reviewer.review_decision == "approve"
