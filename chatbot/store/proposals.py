"""Follow-up cards a working agent proposes: rows that wait for an owner's word.

A proposal is no card: nothing exists on the board until an owner confirms it, and a
refused one leaves only its row (and the card's history line) behind.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from chatbot.store.db import Db, Row

PENDING, CONFIRMED, REFUSED = "pending", "confirmed", "refused"


@dataclass(frozen=True)
class Proposal:
    id: int
    #: The card whose run proposed it, and that run.
    card_id: int
    job_id: int | None
    title: str
    goal: str
    scope: str
    #: The slug the card would get; checked again when it is confirmed.
    slug: str
    state: str
    decided_by: str | None
    created_card_id: int | None
    created_at: float
    decided_at: float | None

    @classmethod
    def from_row(cls, row: Row) -> Proposal:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})

    @property
    def is_pending(self) -> bool:
        return self.state == PENDING


async def add(
    db: Db, card_id: int, job_id: int | None, title: str, goal: str, scope: str, slug: str
) -> Proposal:
    proposal_id = await db.insert(
        "INSERT INTO proposals (card_id, job_id, title, goal, scope, slug, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (card_id, job_id, title, goal, scope, slug, time.time()),
    )
    found = await get(db, proposal_id)
    assert found is not None
    return found


async def get(db: Db, proposal_id: int) -> Proposal | None:
    row = await db.fetchone("SELECT * FROM proposals WHERE id = ?", (proposal_id,))
    return Proposal.from_row(row) if row else None


async def pending_of_job(db: Db, job_id: int) -> int:
    row = await db.fetchone(
        "SELECT count(*) FROM proposals WHERE job_id = ? AND state = 'pending'", (job_id,)
    )
    return int(row[0]) if row else 0


async def pending(db: Db) -> list[Proposal]:
    rows = await db.fetchall("SELECT * FROM proposals WHERE state = 'pending' ORDER BY id")
    return [Proposal.from_row(r) for r in rows]


async def pending_slugs(db: Db) -> set[str]:
    rows = await db.fetchall("SELECT slug FROM proposals WHERE state = 'pending'")
    return {str(r[0]) for r in rows}


async def decide(
    db: Db, proposal_id: int, state: str, actor: str, card_id: int | None = None
) -> Proposal | None:
    """Confirmed or refused; None when it was decided already (the first word wins)."""
    changed = await db.execute(
        "UPDATE proposals SET state = ?, decided_by = ?, decided_at = ?, created_card_id = ? "
        "WHERE id = ? AND state = 'pending'",
        (state, actor, time.time(), card_id, proposal_id),
    )
    return await get(db, proposal_id) if changed == 1 else None
