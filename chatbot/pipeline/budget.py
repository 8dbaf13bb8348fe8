"""The worker's budget checks, made before a run starts (never during one).

The day's budget gates claiming: while it is spent, queued model runs stay queued
(deploys go on) and the room is told once. A card's budget is checked when its job
is claimed: a spent one stops the card where a failure of that stage would.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from chatbot.board import Card, Job, LeaseLost, run_events
from chatbot.board.budget import local_day
from chatbot.board.ports import WorkerSide
from chatbot.board.run_events import BudgetHeld, RunObserver
from chatbot.domain.budgets import BudgetState
from chatbot.domain.roles import DEPLOY_JOB

log = logging.getLogger(__name__)


def usd(amount: float) -> str:
    return f"${amount:.2f}"


def stop_detail(state: BudgetState, role: str) -> str:
    """The failure detail of a stopped card (English, as every failure detail)."""
    allowed = f" with {state.allowances} allowance(s)" if state.allowances else ""
    return (
        f"budget spent: this card's runs cost {usd(state.spent)} of {usd(state.limit)}"
        f"{allowed} ({state.key}); no {role} run was started"
    )


async def hold_for_day_budget(
    board: WorkerSide, observers: Iterable[RunObserver], waiting: set[str]
) -> set[str]:
    """The waiting lanes that may not claim: every model lane while today's budget is spent."""
    models = waiting - {DEPLOY_JOB}
    if not models:
        return set()
    state = await board.budget.day()
    if state is None or not state.reached:
        return set()
    # Once per day and allowance: a notice per wake-up would flood the room.
    if await board.budget.mark_once(f"budget:day-notice:{local_day()}:{state.allowances}"):
        log.warning("today's budget is spent (%s); runs wait", usd(state.spent))
        await run_events.tell(observers, BudgetHeld(state))
    return models


async def stopped_by_budget(board: WorkerSide, job: Job, card: Card, worker: str) -> bool:
    """Stop the claimed run of a card whose budget is spent; True when it was stopped."""
    state = await board.budget.of_card(card)
    if state is None or not state.reached:
        return False
    detail = stop_detail(state, job.kind)
    log.warning("job %s of %s not started: %s", job.id, card.slug, detail)
    try:
        await board.budget.stop(job, worker, state, detail)
    except LeaseLost:
        log.info("job %s was taken away before its budget stop was recorded", job.id)
    return True
