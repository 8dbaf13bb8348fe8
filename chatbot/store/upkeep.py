"""Housekeeping for a bot that runs every day: old bookkeeping rows go, history stays.

Cards, events, jobs, questions and telemetry are the board's history and are kept.
What only served delivery (sent outbox rows, and failed ones once their reason has
been seen) or duplicate detection (processed event ids) is dropped after
`keep_days`: no transport redelivers an event that old.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from chatbot.store.db import Db

KEEP_DAYS = 30


@dataclass(frozen=True)
class Pruned:
    processed_events: int
    sent_posts: int


async def prune(db: Db, *, keep_days: int = KEEP_DAYS, now: float | None = None) -> Pruned:
    cutoff = (time.time() if now is None else now) - keep_days * 86400
    events = await db.execute("DELETE FROM processed_events WHERE at < ?", (cutoff,))
    posts = await db.execute("DELETE FROM outbox WHERE state = 'sent' AND sent_at < ?", (cutoff,))
    posts += await db.execute(
        "DELETE FROM outbox WHERE state = 'failed' AND created_at < ?", (cutoff,)
    )
    return Pruned(events, posts)
