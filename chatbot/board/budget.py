"""Budgets: how much the model runs of a day, and of one card, may cost.

The worker asks before it starts a run; a spent budget starts nothing for its scope.
The day's budget holds every queued run until the next local day (or `/allow`); a
card's budget stops that card's run the way a failure of its stage would, so /retry
and /allow work there. `/allow` raises a budget by its own size once more: today's
(kv, per day) or the card's (on the card, per card).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from chatbot.domain.budgets import Budgets, BudgetState
from chatbot.domain.roles import lane_role
from chatbot.domain.transitions import RUN_FAILURE, Action, By
from chatbot.store import Db, Store, kv, spend
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from chatbot.store.card_data import BudgetStop, budget_stop_record
from chatbot.store.cards import Card
from chatbot.store.jobs import Job
from chatbot.store.spend import Spend

SYSTEM_ACTOR = "system"


@dataclass(frozen=True)
class SpendReport:
    """What `/budget` shows."""

    day: BudgetState | None
    today: Spend
    days: list[Spend]
    #: The configured lanes (a card's lane)...
    lanes: list[Spend]
    #: (card spend, its budget or None); the costliest cards of the period
    cards: list[tuple[Spend, BudgetState | None]]
    per_card_usd: dict[str, float]
    #: ...and the roles that run in a lane of their own (operator, reviewer, ...), by
    #: the role's name: a person configured no such lane and would not know it.
    roles: list[Spend] = field(default_factory=list)


def local_day(now: float | None = None) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(time.time() if now is None else now))


def day_bounds(day: str) -> tuple[float, float]:
    """The first and the after-last second of a local day (23 or 25 hours around DST)."""
    start = time.mktime(time.strptime(day, "%Y-%m-%d"))
    end = time.mktime(time.strptime(local_day(start + 26 * 3600), "%Y-%m-%d"))
    return start, end


async def spent_on(db: Db, day: str) -> Spend:
    return await spend.between(db, day, *day_bounds(day))


def _day_key(day: str) -> str:
    return f"budget:allow-day:{day}"


def budget_stopped(card: Card) -> BudgetStop | None:
    """The budget stop a card waits on, if its last move was one (any move after ends it)."""
    stop = card.data.budget_stop
    if stop is not None and stop["version"] == card.version:
        return stop
    return None


class BoardBudget:
    """The board's side of budgets (`board.budget`): what was spent against what, and the
    moves a budget makes (a run stopped, a day allowed again)."""

    def __init__(
        self,
        store: Store,
        budgets: Budgets,
        *,
        default_lane: str,
        announce: Callable[..., Awaitable[Any]],
    ):
        self.store = store
        self.budgets = budgets
        self.default_lane = default_lane
        # BoardService.announce: the listeners hear a budget's stop like any move.
        self.announce = announce

    # --- reading -----------------------------------------------------------------

    async def day(self, now: float | None = None) -> BudgetState | None:
        if self.budgets.per_day_usd is None:
            return None
        day = local_day(now)
        db = self.store.reader
        spent = await spent_on(db, day)
        allowances = int(await kv.get_value(db, _day_key(day)) or 0)
        return BudgetState(
            "day", spent.usd, self.budgets.per_day_usd, allowances, "bot.budget_usd_per_day"
        )

    async def of_card(self, card: Card) -> BudgetState | None:
        lane = card.lane or self.default_lane
        budget = self.budgets.per_card_usd.get(lane)
        if budget is None:
            return None
        spent = await spend.of_card(self.store.reader, card.id)
        allowances = card.data.budget_allowances
        key = f"lanes.{lane}.budget_usd_per_card"
        return BudgetState("card", spent.usd, budget, allowances, key)

    async def spend_report(self, days: int = 7, cards: int = 8) -> SpendReport:
        db = self.store.reader
        since = local_day(time.time() - (days - 1) * 86400)
        today = local_day()
        costly = []
        start = day_bounds(since)[0]
        for card_id, spent in await spend.by_card(db, start, cards):
            card = await card_store.get_by_id(db, card_id)
            costly.append((spent, await self.of_card(card) if card else None))
        lanes, roles = [], []
        for spent in await spend.by_lane(db, start):
            role = lane_role(spent.name)
            if role is None:
                lanes.append(spent)
            else:
                roles.append(replace(spent, name=role))
        return SpendReport(
            day=await self.day(),
            today=await spent_on(db, today),
            days=await spend.by_day(db, start),
            lanes=lanes,
            cards=costly,
            per_card_usd=dict(self.budgets.per_card_usd),
            roles=roles,
        )

    # --- moving ------------------------------------------------------------------

    async def stop(self, job: Job, worker: str, state: BudgetState, detail: str) -> Card | None:
        """The claimed run does not start: its job fails and its card stops where a
        failure of its stage would, remembering the stop (so /allow knows it)."""
        async with self.store.transaction() as db:
            await job_store.fail(db, job.id, worker, detail)
            if job.card_id is None:
                return None
            before = await card_store.get_by_id(db, job.card_id)
            if before is None or before.phase not in RUN_FAILURE:
                return before
            stop = budget_stop_record(
                state.as_dict() | {"role": job.kind, "version": before.version + 1}
            )
            card = await card_store.transition(
                db,
                before.slug,
                Action.BUDGET_STOPPED,
                actor=SYSTEM_ACTOR,
                by=By.SYSTEM,
                reason=detail,
                failure_stage=RUN_FAILURE[before.phase].stage.value,
                failure_detail=detail,
                data=before.data.updated(budget_stop=stop),
            )
            details = {"budget": stop, "role": job.kind}
            await self.announce(
                db, before, card, Action.BUDGET_STOPPED, SYSTEM_ACTOR, detail, None, details
            )
            return card

    async def allow_day(self) -> BudgetState | None:
        """Today's budget once more; held runs start again. None: no day budget."""
        if self.budgets.per_day_usd is None:
            return None
        key = _day_key(local_day())
        async with self.store.transaction() as db:
            count = int(await kv.get_value(db, key) or 0)
            await kv.set_value(db, key, str(count + 1))
        return await self.day()

    async def mark_once(self, key: str) -> bool:
        """True the first time `key` is marked (a notice posted once per day and limit)."""
        async with self.store.transaction() as db:
            if await kv.get_value(db, key) is not None:
                return False
            await kv.set_value(db, key, "1")
            return True
