"""A budget spent exactly to its limit stops; a cent below it does not (card and day).

The worker's own checks (`stopped_by_budget`, `hold_for_day_budget`) over the real
board and store, on both engines; the runs' costs are telemetry rows as the worker
records them. tests/pipeline/test_budget.py runs the whole pipeline past a budget.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chatbot.board import BoardService, Card
from chatbot.board.run_events import BudgetHeld, RunEvent
from chatbot.domain.budgets import Budgets, BudgetState
from chatbot.domain.phases import Phase
from chatbot.domain.roles import DEPLOY_JOB, role_lane
from chatbot.domain.transitions import Action
from chatbot.pipeline.budget import hold_for_day_budget, stopped_by_budget
from chatbot.store import Store
from chatbot.store import cards as card_store
from tests.records import run_record

# (the runs' costs, the budget, allowances, whether the next run is stopped)
LIMITS = {
    "exactly-at-the-limit": ([0.25, 0.25], 0.5, 0, True),
    "a-cent-below": ([0.25, 0.24], 0.5, 0, False),
    # 0.1 added ten times is 0.9999999999999999 in binary floating point.
    "ten-dimes-make-a-dollar": ([0.1] * 10, 1.0, 0, True),
    "nine-dimes-do-not": ([0.1] * 9, 1.0, 0, False),
    "at-the-limit-with-an-allowance": ([0.25, 0.25], 0.25, 1, True),
    "below-the-limit-with-an-allowance": ([0.25], 0.25, 1, False),
    "over-the-limit": ([0.75], 0.5, 0, True),
}


@pytest.fixture
async def store(database):
    opened = await Store.open(database.value, password_file=database.password_file)
    yield opened
    await opened.close()


def board_with(store: Store, tmp_path: Path, budgets: Budgets) -> BoardService:
    repo = tmp_path / "repo"
    (repo / "docs" / "intent").mkdir(parents=True, exist_ok=True)
    (repo / "docs" / "intent" / "greeting.md").write_text("# Greeting\n\nSay hello.\n")
    return BoardService(store, repo, budgets=budgets)


async def spend(board: BoardService, card_id: int | None, costs: list[float]) -> None:
    for cost in costs:
        await board.queue.record_run(
            run_record(
                role="operator",
                actual_model="m",
                input_tokens=100,
                cached_tokens=None,
                output_tokens=10,
                cost_usd=cost,
                card_id=card_id,
                created_at=time.time(),
            )
        )


@pytest.mark.parametrize("case", LIMITS)
async def test_a_card_budget_spent_to_its_limit_stops_the_next_run(
    case: str, store: Store, tmp_path: Path
) -> None:
    costs, budget, allowances, stops = LIMITS[case]
    board = board_with(store, tmp_path, Budgets(per_card_usd={"light": budget}))
    await board.import_cards()
    card = await board.act("greeting", Action.START, actor="owner")
    if allowances:
        card = await store_allowances(board, card.slug, allowances)
    job = await board.queue.claim(role_lane("operator"), "worker-1", 60)
    assert job is not None and job.card_id == card.id
    await spend(board, card.id, costs)

    assert await stopped_by_budget(board, job, card, "worker-1") is stops
    after = await board.reads.card("greeting")
    if stops:
        assert (after.phase, after.failure_stage) == (Phase.NEEDS_HUMAN, "operator")
        assert "budget spent" in after.failure_detail
        assert "lanes.light.budget_usd_per_card" in after.failure_detail
    else:
        assert after.phase is Phase.OPERATOR_RUNNING and after.failure_stage is None
        assert await board.queue.stopped([job.id]) == []  # still running: the run may start


async def store_allowances(board: BoardService, slug: str, allowances: int) -> Card:
    """The owner's earlier /allow, as the card keeps it."""
    async with board.store.transaction() as db:
        card = await card_store.require(db, slug)
        return await card_store.update(
            db, slug, data=card.data.updated(budget_allowances=allowances)
        )


class Listener:
    def __init__(self) -> None:
        self.told: list[BudgetState] = []

    async def hear(self, event: RunEvent) -> None:
        if isinstance(event, BudgetHeld):
            self.told.append(event.state)


@pytest.mark.parametrize("case", LIMITS)
async def test_a_day_budget_spent_to_its_limit_holds_the_queued_runs(
    case: str, store: Store, tmp_path: Path
) -> None:
    costs, budget, allowances, stops = LIMITS[case]
    board = board_with(store, tmp_path, Budgets(per_day_usd=budget))
    for _ in range(allowances):
        await board.budget.allow_day()
    await spend(board, None, costs)
    listener = Listener()
    waiting = {role_lane("operator"), "light", DEPLOY_JOB}

    held = await hold_for_day_budget(board, [listener], waiting)
    if stops:
        # Model runs wait; a deploy runs no model and goes on. The room is told once.
        assert held == {role_lane("operator"), "light"}
        assert [state.scope for state in listener.told] == ["day"]
        assert await hold_for_day_budget(board, [listener], waiting) == held
        assert len(listener.told) == 1
    else:
        assert held == set() and listener.told == []
