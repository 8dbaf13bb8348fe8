"""What the model runs cost, summed from telemetry for budgets and `/budget`.

A run's cost is its `cost_usd`: the CLI's own figure or, for a runtime that reports
none, its tokens at the configured price. A run with neither counts as nothing and is
counted apart (`unpriced`), so a missing price is visible instead of silently cheap.
Days are the bot's local days, as on the web board's chart: a period starts at a
timestamp the caller gives, and runs are put into days here, not by the database
(SQLite's `date(..., 'localtime')` has no PostgreSQL twin, whose idea of local
time is the server's, not the bot's).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from chatbot.store.db import Db, Row

_SUMS = (
    "coalesce(sum(t.cost_usd), 0.0), count(*), coalesce(sum(t.cost_estimated), 0), "
    "coalesce(sum(CASE WHEN t.cost_usd IS NULL THEN 1 ELSE 0 END), 0)"
)


@dataclass(frozen=True)
class Spend:
    """The cost of a group of runs (a day, a lane, a card)."""

    name: str
    usd: float
    runs: int
    estimated: int = 0
    unpriced: int = 0


def _spend(name: str, row: Row) -> Spend:
    return Spend(name, float(row[0]), int(row[1]), int(row[2]), int(row[3]))


async def between(db: Db, name: str, start: float, end: float) -> Spend:
    """Every run from `start` to before `end` (a local day's bounds: the worker asks on
    every wake-up while runs wait, so this must use the index on the time)."""
    row = await db.fetchone(
        f"SELECT {_SUMS} FROM telemetry t WHERE t.created_at >= ? AND t.created_at < ?",
        (start, end),
    )
    assert row is not None
    return _spend(name, row)


async def of_card(db: Db, card_id: int) -> Spend:
    """Every run a card ever had."""
    row = await db.fetchone(f"SELECT {_SUMS} FROM telemetry t WHERE t.card_id = ?", (card_id,))
    assert row is not None
    return _spend(str(card_id), row)


async def by_day(db: Db, since: float) -> list[Spend]:
    """Each local day since `since` that had runs, newest first."""
    rows = await db.fetchall(
        "SELECT t.created_at, t.cost_usd, t.cost_estimated FROM telemetry t "
        "WHERE t.created_at >= ?",
        (since,),
    )
    days: dict[str, list[float | int]] = {}
    for created_at, cost, estimated in rows:
        day = days.setdefault(time.strftime("%Y-%m-%d", time.localtime(created_at)), [0.0] * 4)
        day[0] += cost or 0.0
        day[1] += 1
        day[2] += estimated
        day[3] += cost is None
    return [
        Spend(name, float(u), int(r), int(e), int(n))
        for name, (u, r, e, n) in sorted(days.items(), reverse=True)
    ]


async def by_lane(db: Db, since: float) -> list[Spend]:
    """By the lane the run's job was queued in (a card's lane, or a role's own)."""
    rows = await db.fetchall(
        f"SELECT coalesce(j.lane, '-') AS lane, {_SUMS} FROM telemetry t "
        "LEFT JOIN jobs j ON j.id = t.job_id WHERE t.created_at >= ? "
        "GROUP BY coalesce(j.lane, '-') ORDER BY 2 DESC, 1",
        (since,),
    )
    return [_spend(row[0], row[1:]) for row in rows]


async def by_card(db: Db, since: float, limit: int) -> list[tuple[int, Spend]]:
    """The cards that cost most since `since`, with their whole cost: (card id, spend)."""
    rows = await db.fetchall(
        f"SELECT c.id, c.slug, {_SUMS} FROM telemetry t JOIN cards c ON c.id = t.card_id "
        "WHERE c.id IN (SELECT card_id FROM telemetry WHERE created_at >= ?) "
        "GROUP BY c.id, c.slug ORDER BY 3 DESC, c.slug LIMIT ?",
        (since, limit),
    )
    return [(row[0], _spend(row[1], row[2:])) for row in rows]
