"""What /metrics reads from the database at each scrape: the queue per lane and role, the
outbox, open questions and live workers per host.

Read from the database, not counted in this process, so that with PostgreSQL every
process (the bot, each `chatbot worker`) reports the same queue. A handful of grouped
queries on the reader connection: a scrape costs the same on a board of any size
(the jobs and outbox rows it groups are the active ones; the indexes cover them).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from chatbot.board.reads import BoardReads


@dataclass(frozen=True)
class LaneRole:
    queued: int = 0
    running: int = 0


@dataclass(frozen=True)
class OutboxState:
    pending: int = 0
    oldest_pending_at: float | None = None
    # Rows given up after their tries (kept until upkeep prunes them, 30 days).
    failed: int = 0


@dataclass(frozen=True)
class MetricsSnapshot:
    """The database's side of one scrape, and when it was taken."""

    at: float
    # (lane, role) -> counts; a pair appears while either count is above zero.
    jobs: dict[tuple[str, str], LaneRole] = field(default_factory=dict)
    # lane -> when its oldest queued job was queued
    oldest_queued_at: dict[str, float] = field(default_factory=dict)
    outbox: dict[str, OutboxState] = field(default_factory=dict)
    questions_open: int = 0
    oldest_question_at: float | None = None
    # host -> workers alive there now; hosts whose workers all stopped count 0 (rows are
    # kept for a week, so an alert sees a host go quiet rather than vanish).
    workers_alive: dict[str, int] = field(default_factory=dict)
    # phase -> cards in it (phases with none are left out).
    cards: dict[str, int] = field(default_factory=dict)
    # Agents' requests to run something, waiting for an owner.
    approvals_open: int = 0
    # Owners' line comments no commit has answered yet (open or with an agent).
    comments_open: int = 0
    # outcome -> routine runs ever (ran, refused, failed, skipped, held, stopped).
    routine_runs: dict[str, int] = field(default_factory=dict)


_JOBS_SQL = """
SELECT lane, kind, state, count(*), min(created_at) FROM jobs
WHERE state IN ('queued', 'running') GROUP BY lane, kind, state
"""
_OUTBOX_SQL = """
SELECT transport, state, count(*), min(created_at) FROM outbox
WHERE state IN ('pending', 'failed') GROUP BY transport, state
"""
_QUESTIONS_SQL = "SELECT count(*), min(created_at) FROM questions WHERE state = 'open'"
_CARDS_SQL = "SELECT phase, count(*) FROM cards GROUP BY phase"
_APPROVALS_SQL = "SELECT count(*) FROM run_talk WHERE kind = 'approval' AND state = 'open'"
_COMMENTS_SQL = "SELECT count(*) FROM line_comments WHERE state IN ('open', 'sent')"
# Runs still being decided ("claimed") are not an outcome yet.
_ROUTINES_SQL = (
    "SELECT outcome, count(*) FROM routine_runs WHERE outcome <> 'claimed' GROUP BY outcome"
)
_WORKERS_SQL = """
SELECT host, sum(CASE WHEN expires_at >= ? THEN 1 ELSE 0 END) FROM workers GROUP BY host
"""


async def metrics_snapshot(board: BoardReads, now: float | None = None) -> MetricsSnapshot:
    """One scrape's reads, on the reader connection (committed state, no writer waits)."""
    db = board.store.reader
    now = time.time() if now is None else now
    jobs: dict[tuple[str, str], LaneRole] = {}
    oldest: dict[str, float] = {}
    for lane, kind, state, count, first in await db.fetchall(_JOBS_SQL):
        found = jobs.get((lane, kind), LaneRole())
        if state == "queued":
            jobs[(lane, kind)] = LaneRole(found.queued + count, found.running)
            oldest[lane] = min(first, oldest.get(lane, first))
        else:
            jobs[(lane, kind)] = LaneRole(found.queued, found.running + count)
    outbox: dict[str, OutboxState] = {}
    for transport, state, count, first in await db.fetchall(_OUTBOX_SQL):
        found_box = outbox.get(transport, OutboxState())
        if state == "pending":
            outbox[transport] = OutboxState(count, first, found_box.failed)
        else:
            outbox[transport] = OutboxState(found_box.pending, found_box.oldest_pending_at, count)
    row = await db.fetchone(_QUESTIONS_SQL)
    assert row is not None
    workers = {host: int(alive or 0) for host, alive in await db.fetchall(_WORKERS_SQL, (now,))}
    cards = {str(phase): int(count) for phase, count in await db.fetchall(_CARDS_SQL)}
    approvals = await db.fetchone(_APPROVALS_SQL)
    comments = await db.fetchone(_COMMENTS_SQL)
    routine_runs = {str(outcome): int(count) for outcome, count in await db.fetchall(_ROUTINES_SQL)}
    return MetricsSnapshot(
        at=now,
        jobs=jobs,
        oldest_queued_at=oldest,
        outbox=outbox,
        questions_open=row[0] or 0,
        oldest_question_at=row[1],
        workers_alive=workers,
        cards=cards,
        approvals_open=int(approvals[0] or 0) if approvals else 0,
        comments_open=int(comments[0] or 0) if comments else 0,
        routine_runs=routine_runs,
    )
