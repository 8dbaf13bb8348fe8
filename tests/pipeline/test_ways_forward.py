"""Every failure has a way forward that works: the regression tests of issue 9.

Each failure below used to strand its card (only /archive was left) or act on
the wrong state; each test walks the way forward the bot names to the end.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store import questions as question_store
from chatbot.store import telemetry
from chatbot.store.jobs import MAX_AUTOMATIC_ATTEMPTS, claim
from tests.pipeline.harness import builder_answer, direct, review_answer, start
from tests.pipeline.support import OWNER, configure, jobs_of, kill_strays, operator_role, run_idle

INTENT = "# Greeting module\n\nAdd `greet.py` with a `greet()` function.\n"
BUILD = {
    "match": "COMMIT-MESSAGE",
    "cli": "codex",
    "answer": builder_answer("Add greet()"),
    "files": {"greet.py": "def greet():\n    return 'hi'\n"},
}
APPROVE = {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer("approve")}


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    yield
    for h in list(harnesses):
        kill_strays(h)


# --- a failed operator run: answer it or /retry it, and the card goes on -----------

# The bounds of the operator's runs. A hang is found by them, so theirs are short; the
# other failures' runs must end by themselves, and a loaded box once took the stand-in
# past a 2 s bound ("codex: timed out after 2s" where "exactly one" was expected).
ENDS_ALONE = "timeout_s = 60\nidle_timeout_s = 60\n"
HANGS = "timeout_s = 6\nidle_timeout_s = 6\n"

OPERATOR_FAILURES = [
    pytest.param({"answer": "I would build it directly."}, "rejected", ENDS_ALONE, id="garbage"),
    pytest.param(
        {"answer": direct() + "\n" + direct()}, "exactly one", ENDS_ALONE, id="two-decisions"
    ),
    pytest.param(
        {"answer": direct(), "huge_output_bytes": 5 * 1024 * 1024},
        "rejected",
        ENDS_ALONE,
        id="5MB-answer",
    ),
    pytest.param(
        {"answer": direct(), "exit_code": 1, "stderr": "boom"}, "status 1", ENDS_ALONE, id="exit-1"
    ),
    pytest.param({"hang": "before_output"}, "timed out", HANGS, id="hang"),
    pytest.param(
        {"answer": direct(), "hang": "after_output"}, "timed out", HANGS, id="answer-then-hang"
    ),
]


@pytest.mark.parametrize("way", ["retry", "answer"])
@pytest.mark.parametrize(("failure", "named", "bounds"), OPERATOR_FAILURES)
async def test_a_failed_operator_run_goes_on_by_answer_or_retry(
    tmp_path: Path, monkeypatch, harnesses, failure: dict, named: str, bounds: str, way: str
) -> None:
    configure(monkeypatch, operator_role(bounds))
    turns = [
        {"match": "OPERATOR-DECISION", **failure},
        {"match": "OPERATOR-DECISION", "answer": direct()},
        BUILD,
        APPROVE,
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    card = await h.board.reads.card("greeting")
    assert (card.phase, card.failure_stage) == (Phase.NEEDS_HUMAN, "operator")
    assert named in card.failure_detail
    # There is something to answer, and the texts' commands are allowed here.
    question = (await h.board.reads.view("greeting")).open_question
    assert question is not None and question.kind == "operator_failed"
    if way == "retry":
        await h.board.act("greeting", Action.RETRY, actor=OWNER)
    else:
        await h.board.answer("greeting", "Keep it to one file.", actor=OWNER)
    await run_idle(h)

    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    assert card.failure_stage is None and card.failure_detail is None
    second_prompt = h.prompts_of("OPERATOR-DECISION")[-1]
    assert ("Keep it to one file." in second_prompt) is (way == "answer")
    # The question was answered or, on /retry, closed with the phase it belonged to.
    assert await question_store.open_for_card(h.store.reader, card.id) is None


async def test_a_failed_operator_run_may_be_started_afresh(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": "no decision here"},
        {"match": "OPERATOR-DECISION", "answer": direct()},
        BUILD,
        APPROVE,
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    assert (await h.board.reads.card("greeting")).phase is Phase.READY_FOR_DEPLOYMENT


async def test_a_bot_crash_during_the_operator_run_ends_in_a_question(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [{"match": "OPERATOR-DECISION", "answer": direct()}, BUILD, APPROVE]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    card = await h.board.act("greeting", Action.START, actor=OWNER)
    # A bot that died in each of its automatic attempts: the job is still "running",
    # leased by a process that is gone.
    async with h.store.transaction() as db:
        await db.execute(
            "UPDATE jobs SET attempts = ? WHERE card_id = ?", (MAX_AUTOMATIC_ATTEMPTS - 1, card.id)
        )
        job = await claim(db, "role:operator", "dead-bot", 60)
    assert job is not None and job.attempts == MAX_AUTOMATIC_ATTEMPTS
    await h.board.failures.recover(("dead-bot",))

    card = await h.board.reads.card("greeting")
    assert (card.phase, card.failure_stage) == (Phase.NEEDS_HUMAN, "operator")
    assert "worker stopped" in card.failure_detail
    await h.board.answer("greeting", "go on", actor=OWNER)
    await run_idle(h)
    assert (await h.board.reads.card("greeting")).phase is Phase.READY_FOR_DEPLOYMENT


# --- a failed inspection of an approved card ---------------------------------------


def routing_answer(summary: str = "Nothing is missing.") -> str:
    value = {
        "schema_version": 1,
        "mode": "route_next",
        "outcome": "no_action",
        "recommended_action": None,
        "basis": [{"source": "docs/review/greeting.md", "finding": "approved"}],
        "summary": summary,
        "question": None,
        "required_action": None,
    }
    return f"===ROUTING_RESULT===\n{json.dumps(value)}\n===END_ROUTING_RESULT==="


async def approved(tmp_path: Path, monkeypatch, harnesses, more: list[dict]):
    turns = [{"match": "OPERATOR-DECISION", "answer": direct()}, BUILD, APPROVE, *more]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    assert (await h.board.reads.card("greeting")).phase is Phase.READY_FOR_DEPLOYMENT
    return h


async def test_a_failed_inspection_is_retried_in_its_mode_and_returns_to_ready(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    more = [
        {"match": "ROUTING_RESULT", "answer": "not an answer"},
        {"match": "ROUTING_RESULT", "answer": routing_answer()},
    ]
    h = await approved(tmp_path, monkeypatch, harnesses, more)
    await h.board.act("greeting", Action.INSPECT, actor=OWNER, payload={"mode": "route_next"})
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.INSPECTOR_FAILED
    assert card.resume_phase is Phase.READY_FOR_DEPLOYMENT

    await h.board.act("greeting", Action.RETRY, actor=OWNER)
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    # Back where the inspection started, not where it failed; and in the same mode.
    assert card.phase is Phase.READY_FOR_DEPLOYMENT
    assert card.data.inspection["mode"] == "route_next"
    assert len(h.prompts_of("ROUTING_RESULT")) == 2


async def test_a_failed_inspection_can_be_dropped_and_the_card_deployed(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    more = [{"match": "INSPECTION_RESULT", "answer": "", "exit_code": 1, "stderr": "crash"}]
    h = await approved(tmp_path, monkeypatch, harnesses, more)
    commit = (await h.board.reads.card("greeting")).commit_hash
    await h.board.act("greeting", Action.INSPECT, actor=OWNER)
    await run_idle(h)
    assert (await h.board.reads.card("greeting")).phase is Phase.INSPECTOR_FAILED

    card = await h.board.act("greeting", Action.CANCEL, actor=OWNER)
    assert card.phase is Phase.READY_FOR_DEPLOYMENT
    assert card.failure_stage is None and card.commit_hash == commit
    await h.board.act("greeting", Action.DEPLOY, actor=OWNER)
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.DEPLOYED, card.failure_detail


async def test_a_failed_card_keeps_its_stage_through_a_failed_inspection(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct()},
        {"match": "COMMIT-MESSAGE", "cli": "codex", "answer": "x", "exit_code": 1},
        {"match": "INSPECTION_RESULT", "answer": "broken"},
        BUILD,
        APPROVE,
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    failed = await h.board.reads.card("greeting")
    assert (failed.phase, failed.failure_stage) == (Phase.FAILED, "builder")
    await h.board.act("greeting", Action.INSPECT, actor=OWNER)
    await run_idle(h)
    assert (await h.board.reads.card("greeting")).failure_stage == "inspector"

    card = await h.board.act("greeting", Action.CANCEL, actor=OWNER)
    # Back to failed at the builder, so /retry rebuilds (it used to be stage "worker").
    assert (card.phase, card.failure_stage) == (Phase.FAILED, "builder")
    assert card.failure_detail == failed.failure_detail
    await h.board.act("greeting", Action.RETRY, actor=OWNER)
    await run_idle(h)
    assert (await h.board.reads.card("greeting")).phase is Phase.READY_FOR_DEPLOYMENT


async def test_a_waiting_inspection_whose_question_is_gone_takes_an_answer(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    asking = routing_answer().replace('"outcome": "no_action"', '"outcome": "needs_input"')
    asking = asking.replace('"question": null', '"question": "Ship it?"').replace(
        '"required_action": null', '"required_action": "Decide."'
    )
    more = [
        {"match": "ROUTING_RESULT", "answer": asking},
        {"match": "ROUTING_RESULT", "answer": routing_answer()},
    ]
    h = await approved(tmp_path, monkeypatch, harnesses, more)
    await h.board.act("greeting", Action.INSPECT, actor=OWNER, payload={"mode": "route_next"})
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.INSPECTOR_QUESTION
    async with h.store.transaction() as db:
        await db.execute("UPDATE questions SET state = 'cancelled' WHERE card_id = ?", (card.id,))

    await h.board.answer("greeting", "yes", actor=OWNER)
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT
    assert "yes" in h.prompts_of("ROUTING_RESULT")[-1]


async def test_a_waiting_repair_can_be_dropped(tmp_path: Path, monkeypatch, harnesses) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct()},
        {"match": "COMMIT-MESSAGE", "cli": "codex", "answer": "x", "exit_code": 1},
        {
            "match": "FIXER-QUESTION",
            "answer": "===FIXER-QUESTION===\nKeep the API?\n===END-FIXER-QUESTION===",
        },
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    await h.board.act("greeting", Action.FIX, actor=OWNER)
    await run_idle(h)
    assert (await h.board.reads.card("greeting")).phase is Phase.FIXER_QUESTION

    card = await h.board.act("greeting", Action.CANCEL, actor=OWNER)
    assert (card.phase, card.failure_stage) == (Phase.FAILED, "builder")
    assert await question_store.open_for_card(h.store.reader, card.id) is None


# --- the builder: answers without a commit message, broken final answers -----------


async def test_builder_turns_without_a_commit_message_are_named(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    chatter = {"match": "COMMIT-MESSAGE", "cli": "codex", "answer": "Working on it."}
    # The light lane's limit is 5 turns.
    turns = [{"match": "OPERATOR-DECISION", "answer": direct()}, *[chatter] * 5]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    events = (await h.board.reads.view("greeting")).events
    reason = events[-1].reason
    assert events[-1].to_phase is Phase.PLANNING_WITH_FEEDBACK
    assert "iteration limit 5 reached (5 answers without the commit-message block)" in reason


async def test_a_broken_final_builder_answer_is_rejected_at_once(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    broken = {
        "match": "COMMIT-MESSAGE",
        "cli": "codex",
        "answer": "===COMMIT-MESSAGE===\nAdd greet()\n===END-COMMIT-MESSAGE===\nno report",
    }
    turns = [{"match": "OPERATOR-DECISION", "answer": direct()}, broken]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert (card.phase, card.failure_stage) == (Phase.FAILED, "builder")
    assert "builder's answer was rejected" in card.failure_detail
    assert "BUILDER-REPORT" in card.failure_detail
    # One builder run, not a loop of "unfinished" turns up to the limit.
    assert len(h.prompts_of("COMMIT-MESSAGE")) == 1
    # Its telemetry says the answer did not count.
    runs = {r.role: r for r in await telemetry.for_card(h.store.reader, card.id)}
    builder = runs["builder"]
    assert (builder.outcome, builder.accepted) == ("ok", False)
    assert builder.shown_outcome.startswith("rejected: ") and "BUILDER-REPORT" in builder.rejection
    assert runs["operator"].outcome == "ok"


# --- a new commit is a new subject for review and deployment ------------------------


async def test_a_new_commit_clears_the_old_review_and_deployment(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    fix = {
        "match": "FIXER-QUESTION",
        "answer": builder_answer("Fix greet()"),
        "files": {"greet.py": "def greet():\n    return 'hello'\n"},
    }
    reject = {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer("reject")}
    h = await approved(tmp_path, monkeypatch, harnesses, [])
    first = await h.board.reads.card("greeting")
    assert (first.review_decision, first.deployment_status) == ("approve", "pending")
    # The owner inspects, then repairs anyway: the fixer's commit goes to review.
    scenario = json.loads((tmp_path / "scenario.json").read_text())
    scenario["turns"] += [fix, reject]
    (tmp_path / "scenario.json").write_text(json.dumps(scenario))
    async with h.store.transaction() as db:
        await db.execute(
            "UPDATE cards SET phase = 'failed', failure_stage = 'review' WHERE slug = 'greeting'"
        )
    await h.board.act("greeting", Action.FIX, actor=OWNER)
    # Stop right after the fixer's commit: look before the review runs.
    seen = {}

    async def look(_db, change) -> None:
        if change.action == Action.FIXER_COMMITTED:
            seen["card"] = change.card

    h.board.listeners.append(look)
    await run_idle(h)
    committed = seen["card"]
    assert committed.commit_hash != first.commit_hash
    assert committed.review_decision is None and committed.deployment_status is None
    assert committed.review_report_path is None
    card = await h.board.reads.card("greeting")
    assert (card.phase, card.review_decision) == (Phase.PLANNING_WITH_FEEDBACK, "reject")
    assert card.deployment_status is None


async def test_until_idle_jobs_that_failed_are_counted(tmp_path: Path, monkeypatch, harnesses):
    turns = [{"match": "OPERATOR-DECISION", "answer": "nonsense"}]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    assert h.worker.failed_jobs == 1
    [job] = await jobs_of(h, (await h.board.reads.card("greeting")).id)
    assert job["state"] == "failed"
