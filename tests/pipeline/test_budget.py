"""Budgets (issue 16): a spent card or day budget starts no new run, the owner is asked in
the room, `/budget` shows the spend and `/allow` goes on.

The stand-in codex reports 100 input tokens per run and no cost; priced at $1000 per
million input tokens each codex run costs $0.10, so the operator and the builder spend
$0.20 and a budget of $0.15 stops the third run, the review.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store import telemetry
from tests.inprocess import in_thread
from tests.pipeline.harness import builder_answer, direct, review_answer, start
from tests.pipeline.room import open_room
from tests.pipeline.support import OWNER, configure, jobs_of, kill_strays, run_idle

INTENT = "# Greeting module\n\nAdd `greet.py` with a `greet()` function.\n"
TURNS = [
    {"match": "OPERATOR-DECISION", "answer": direct()},
    {
        "match": "COMMIT-MESSAGE",
        "cli": "codex",
        "answer": builder_answer("Add greet()"),
        "files": {"greet.py": "def greet():\n    return 'hi'\n"},
    },
    {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer("approve")},
]
PRICED = {
    'pass_env = ["FAKE_CLI_SCENARIO", "FAKE_CLI_STATE", "FAKE_CLI_LOG"]\n[runtimes.claude]': (
        'pass_env = ["FAKE_CLI_SCENARIO", "FAKE_CLI_STATE", "FAKE_CLI_LOG"]\n'
        "usd_per_million_input_tokens = 1000\n[runtimes.claude]"
    )
}


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    yield
    for h in list(harnesses):
        kill_strays(h)


def roles_run(h) -> list[str]:
    return [call["argv"] and _role(call["stdin"]) for call in h.calls()]


def _role(prompt: str) -> str:
    for marker, role in (
        ("OPERATOR-DECISION", "operator"),
        ("REVIEW-RESULT", "reviewer"),
        ("COMMIT-MESSAGE", "builder"),
    ):
        if marker in prompt:
            return role
    return "?"


async def test_a_card_budget_stops_the_third_run_and_allow_goes_on(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    configure(
        monkeypatch,
        {
            **PRICED,
            "iteration_limit = 5\nconcurrency = 2\n": (
                "iteration_limit = 5\nconcurrency = 2\nbudget_usd_per_card = 0.15\n"
            ),
        },
    )
    h = await start(tmp_path, TURNS, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    room = open_room(h)
    await room.say("/start greeting")
    await run_idle(h)

    card = await h.board.reads.card("greeting")
    # Two runs spent $0.20 of $0.15: the review never started.
    assert roles_run(h) == ["operator", "builder"]
    assert (card.phase, card.failure_stage) == (Phase.FAILED, "review")
    assert "cost $0.20 of $0.15" in card.failure_detail
    assert "lanes.light.budget_usd_per_card" in card.failure_detail
    runs = await telemetry.for_card(h.store.reader, card.id)
    assert [(r.role, r.cost_usd, r.cost_estimated) for r in reversed(runs)] == [
        ("operator", pytest.approx(0.1), True),
        ("builder", pytest.approx(0.1), True),
    ]
    reviewer_job = (await jobs_of(h, card.id))[-1]
    assert (reviewer_job["kind"], reviewer_job["state"]) == ("reviewer", "failed")
    # The owner is asked in the room, with a way forward that works here.
    asked = [row for row in await room.rows() if row.text.startswith("💸 greeting:")]
    assert len(asked) == 1
    assert "no reviewer run was started" in asked[0].text
    assert "/allow greeting" in asked[0].text and "/budget" in asked[0].text
    status = await room.say("/status greeting")
    assert "stopped by its budget ($0.20 of $0.15): /allow greeting" in status
    spend = await room.say("/budget")
    assert "Today: $0.20, 2 runs (no day budget)." in spend
    assert "greeting: $0.20 of $0.15, 2 runs; 2 priced from tokens" in spend
    assert "Card budgets: light $0.15." in spend

    # /retry alone meets the same budget again; /allow gives the card another $0.15.
    await room.say("/retry greeting")
    await run_idle(h)
    assert roles_run(h) == ["operator", "builder"]
    again = await h.board.reads.card("greeting")
    assert (again.phase, again.failure_stage) == (Phase.FAILED, "review")
    answer = await room.say("/allow greeting")
    assert "greeting: /allow — failed → reviewing" in answer
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    assert roles_run(h) == ["operator", "builder", "reviewer"]
    assert card.data.budget_allowances == 1
    assert "stopped by its budget" not in await room.say("/status greeting")
    assert "/allow greeting" not in await room.say("/status greeting")


async def test_allow_by_reaction_and_a_card_not_stopped_is_not_allowed(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    configure(
        monkeypatch,
        {
            **PRICED,
            "iteration_limit = 5\nconcurrency = 2\n": (
                "iteration_limit = 5\nconcurrency = 2\nbudget_usd_per_card = 0.08\n"
            ),
        },
    )
    h = await start(tmp_path, TURNS, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    room = open_room(h)
    assert "greeting was not stopped by its budget" in await room.say("/allow greeting")
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    # The operator ($0.10) spent the whole $0.08: the builder did not start.
    assert (card.phase, card.failure_stage) == (Phase.FAILED, "builder")
    asked = next(row for row in await room.rows() if row.text.startswith("💸 greeting:"))
    assert "moved" not in await room.react(asked, "👍")
    await run_idle(h)
    # One allowance: $0.16 of budget, the builder spends it ($0.20). The review stops.
    card = await h.board.reads.card("greeting")
    assert (card.phase, card.failure_stage) == (Phase.FAILED, "review")
    assert roles_run(h) == ["operator", "builder"]
    assert card.data.budget_allowances == 1
    # The shell goes on too (an owner without chat), and says when there is nothing to allow.
    assert "no day budget" in (await chatbot(h, "allow")).stderr
    allowed = await chatbot(h, "allow", "greeting")
    assert allowed.returncode == 0 and "greeting: reviewing" in allowed.stdout, allowed.stderr
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT and card.data.budget_allowances == 2
    refused = await chatbot(h, "allow", "greeting")
    assert refused.returncode == 1 and "not stopped by its budget" in refused.stderr


async def chatbot(h, *args: str) -> subprocess.CompletedProcess[str]:
    return await in_thread(*args, "--config", str(h.root / "bot.toml"))


async def test_a_day_budget_holds_the_third_run_until_allowed(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    configure(
        monkeypatch,
        {
            **PRICED,
            'workspaces = "workspaces"\n': (
                'workspaces = "workspaces"\nbudget_usd_per_day = 0.15\n'
            ),
        },
    )
    h = await start(tmp_path, TURNS, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    room = open_room(h)
    await room.say("/start greeting")
    await run_idle(h)

    # The review waits in the queue: nothing failed, nothing started.
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.REVIEWING and card.failure_stage is None
    assert roles_run(h) == ["operator", "builder"]
    assert (await jobs_of(h, card.id))[-1]["state"] == "queued"
    assert h.worker.held == {"role:reviewer"}
    await run_idle(h)  # looking again asks again? No: once per day.
    held = [row.text for row in await room.rows() if row.text.startswith("💸 Today")]
    assert held == [
        "💸 Today's budget is spent: $0.20 of $0.15 (bot.budget_usd_per_day). Queued runs "
        "wait until tomorrow; /budget shows the spend. To go on today: /allow gives today "
        "another $0.15, or raise bot.budget_usd_per_day in the configuration and restart the bot."
    ]
    spend = await room.say("/budget")
    assert "Today: $0.20 of $0.15 (bot.budget_usd_per_day), 2 runs." in spend
    assert "Today's budget is spent: queued runs wait." in spend
    assert "queued" in await room.say("/runs")

    assert "Today's budget is now $0.30 ($0.20 spent); waiting runs start." in await room.say(
        "/allow"
    )
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    assert roles_run(h) == ["operator", "builder", "reviewer"]


async def test_without_a_day_budget_allow_says_so(tmp_path: Path, monkeypatch, harnesses) -> None:
    h = await start(tmp_path, TURNS, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    room = open_room(h)
    assert "There is no day budget" in await room.say("/allow")
    assert "No run has cost anything yet." in await room.say("/budget")
