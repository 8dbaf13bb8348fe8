"""When the daily digest was last sent, and what moved on the board in a span of time.

The day's digest is claimed by one UPDATE whose row count decides: of several bot
processes on one database, exactly one sends it, and the claim lands in the
transaction that writes its posts, so a restart neither repeats nor skips it.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatbot.store.db import Db

DAILY = "daily"


@dataclass(frozen=True)
class Last:
    #: The bot's local day it was last sent ("" before the first one).
    day: str
    at: float | None


@dataclass(frozen=True)
class Move:
    slug: str
    from_phase: str | None
    to_phase: str
    action: str
    reason: str
    at: float


async def last(db: Db, name: str = DAILY) -> Last:
    row = await db.fetchone("SELECT last_day, last_at FROM digests WHERE name = ?", (name,))
    return Last(row[0], row[1]) if row else Last("", None)


async def claim(db: Db, day: str, at: float, name: str = DAILY) -> bool:
    """True when this caller sends `day`'s digest: nobody sent it (or a later one) yet."""
    changed = await db.execute(
        "UPDATE digests SET previous_at = last_at, last_day = ?, last_at = ? "
        "WHERE name = ? AND last_day < ?",
        (day, at, name, day),
    )
    return changed == 1


async def moves(db: Db, since: float, until: float) -> list[Move]:
    """Every transition from `since` to before `until`, oldest first."""
    rows = await db.fetchall(
        "SELECT c.slug, e.from_phase, e.to_phase, e.action, e.reason, e.at FROM events e "
        "JOIN cards c ON c.id = e.card_id WHERE e.at >= ? AND e.at < ? ORDER BY e.at, e.id",
        (since, until),
    )
    return [Move(*row) for row in rows]
