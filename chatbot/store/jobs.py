"""The job queue: enqueue, claim with a lease, heartbeat, finish, recover.

Small explicit states (queued -> running -> done | failed | cancelled), in the
spirit of arq, kept in the same database as the cards so a job and the card
transition that caused it commit together.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from chatbot.domain.roles import is_repeatable
from chatbot.store.db import Db, IntegrityError, Row


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


ACTIVE = (JobState.QUEUED.value, JobState.RUNNING.value)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")

MAX_AUTOMATIC_ATTEMPTS = 3


@dataclass(frozen=True)
class Job:
    id: int
    card_id: int | None
    kind: str
    lane: str
    state: JobState
    idempotency_key: str | None
    payload: dict[str, Any]
    attempts: int
    lease_owner: str | None
    lease_expires_at: float | None
    heartbeat_at: float | None
    created_at: float
    started_at: float | None
    finished_at: float | None
    error: str | None
    result: str | None
    # pid:start-time of the agent process a running job started (see runners.process).
    process: str | None = None
    # The host of the worker that claimed it.
    host: str | None = None
    #: Its runs go through an interactive protocol: it can be steered (store/talk.py).
    talks: int = 0
    #: Not to be claimed before this time: the provider's quota or rate limit (`wait`).
    not_before: float | None = None

    @classmethod
    def from_row(cls, row: Row) -> Job:
        values = dict(row)
        values["state"] = JobState(values["state"])
        values["payload"] = json.loads(values["payload"])
        return cls(**values)


class ActiveJobExists(Exception):
    """The card already has a queued or running job."""

    def __init__(self, card_id: int):
        super().__init__(f"card {card_id} already has an active job")
        self.card_id = card_id


class LeaseLost(Exception):
    """The job is no longer held by this worker (recovered, cancelled or finished)."""


async def enqueue(
    db: Db,
    *,
    kind: str,
    lane: str,
    card_id: int | None = None,
    payload: dict[str, Any] | None = None,
    idempotency_key: str | None = None,
) -> tuple[Job, bool]:
    """Queue a job. Returns (job, created); a known idempotency key returns the old job."""
    if idempotency_key is not None:
        existing = await db.fetchone(
            "SELECT * FROM jobs WHERE idempotency_key = ?", (idempotency_key,)
        )
        if existing is not None:
            return Job.from_row(existing), False
    try:
        job_id = await db.insert(
            "INSERT INTO jobs (card_id, kind, lane, state, idempotency_key, payload, created_at) "
            "VALUES (?, ?, ?, 'queued', ?, ?, ?)",
            (card_id, kind, lane, idempotency_key, json.dumps(payload or {}), time.time()),
        )
    except IntegrityError as error:
        if error.about("jobs.card_id", "jobs_one_active_per_card") and card_id is not None:
            raise ActiveJobExists(card_id) from None
        raise
    job = await get(db, job_id)
    assert job is not None
    return job, True


async def get(db: Db, job_id: int) -> Job | None:
    row = await db.fetchone("SELECT * FROM jobs WHERE id = ?", (job_id,))
    return Job.from_row(row) if row else None


async def active_for_card(db: Db, card_id: int) -> Job | None:
    row = await db.fetchone(
        "SELECT * FROM jobs WHERE card_id = ? AND state IN (?, ?)", (card_id, *ACTIVE)
    )
    return Job.from_row(row) if row else None


async def claim(
    db: Db,
    lane: str,
    owner: str,
    lease_s: float,
    *,
    limit: int | None = None,
    host: str | None = None,
) -> Job | None:
    """Take the oldest queued job of a lane and lease it to `owner`, unless the lane
    already runs `limit` jobs, counted over every worker on the database.

    The lane's lock makes the count and the claim one step against claimers on other
    hosts; SKIP LOCKED passes over a row another transaction holds (a cancel, another
    claim) instead of waiting for it.
    """
    await db.lock(f"lane:{lane}")
    now = time.time()
    row = await db.fetchone(
        "UPDATE jobs SET state = 'running', lease_owner = ?, host = ?, lease_expires_at = ?, "
        "heartbeat_at = ?, started_at = ?, attempts = attempts + 1 "
        "WHERE id = (SELECT id FROM jobs WHERE lane = ? AND state = 'queued' "
        "AND (not_before IS NULL OR not_before <= ?) "
        "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) "
        "AND (SELECT count(*) FROM jobs WHERE lane = ? AND state = 'running') < ? "
        "RETURNING *",
        (
            owner,
            host,
            now + lease_s,
            now,
            now,
            lane,
            now,
            lane,
            1 << 30 if limit is None else limit,
        ),
    )
    return Job.from_row(row) if row else None


async def wait(db: Db, job_id: int, owner: str, not_before: float, reason: str) -> Job:
    """Put a running job back in the queue until `not_before`: its run met the provider's
    quota or rate limit, which says nothing about the work, so the attempt is not counted."""
    changed = await db.execute(
        "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL, "
        "process = NULL, attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, "
        "not_before = ?, error = ? "
        "WHERE id = ? AND state = 'running' AND lease_owner = ?",
        (not_before, _CONTROL.sub(" ", reason).strip()[:1000], job_id, owner),
    )
    if changed != 1:
        raise LeaseLost(f"job {job_id} is not active for this worker")
    job = await get(db, job_id)
    assert job is not None
    return job


async def next_not_before(db: Db, lanes: tuple[str, ...]) -> float | None:
    """When the earliest waiting job of these lanes may be claimed; None: none waits."""
    if not lanes:
        return None
    marks = ", ".join("?" * len(lanes))
    row = await db.fetchone(
        f"SELECT min(not_before) FROM jobs WHERE state = 'queued' AND lane IN ({marks}) "
        "AND not_before IS NOT NULL",
        lanes,
    )
    return float(row[0]) if row and row[0] is not None else None


async def queued_lanes(db: Db, lanes: tuple[str, ...]) -> set[str]:
    if not lanes:
        return set()
    marks = ", ".join("?" * len(lanes))
    rows = await db.fetchall(
        f"SELECT DISTINCT lane FROM jobs WHERE state = 'queued' AND lane IN ({marks})", lanes
    )
    return {row[0] for row in rows}


async def claimable_lanes(db: Db, limits: dict[str, int]) -> set[str]:
    """Lanes with a job queued and, over every worker on the database, a free slot."""
    if not limits:
        return set()
    lanes = tuple(limits)
    marks = ", ".join("?" * len(lanes))
    rows = await db.fetchall(
        "SELECT lane, state, count(*) FROM jobs "
        f"WHERE state IN ('queued', 'running') AND lane IN ({marks}) "
        "AND (not_before IS NULL OR state = 'running' OR not_before <= ?) GROUP BY lane, state",
        (*lanes, time.time()),
    )
    queued = {row[0] for row in rows if row[1] == "queued"}
    running = {row[0]: row[2] for row in rows if row[1] == "running"}
    return {lane for lane in queued if running.get(lane, 0) < limits[lane]}


async def cancelled(db: Db, job_ids: tuple[int, ...]) -> list[int]:
    if not job_ids:
        return []
    marks = ", ".join("?" * len(job_ids))
    rows = await db.fetchall(
        f"SELECT id FROM jobs WHERE id IN ({marks}) AND state = 'cancelled'", job_ids
    )
    return [row[0] for row in rows]


async def heartbeat(db: Db, job_id: int, owner: str, lease_s: float) -> None:
    now = time.time()
    changed = await db.execute(
        "UPDATE jobs SET heartbeat_at = ?, lease_expires_at = ? "
        "WHERE id = ? AND state = 'running' AND lease_owner = ?",
        (now, now + lease_s, job_id, owner),
    )
    if changed != 1:
        raise LeaseLost(f"job {job_id} is no longer leased to {owner}")


async def _finish(
    db: Db,
    job_id: int,
    state: JobState,
    *,
    owner: str | None,
    error: str | None = None,
    result: str | None = None,
) -> Job:
    if owner is None:
        condition, params = "state IN (?, ?)", list(ACTIVE)
    else:
        condition, params = "state = 'running' AND lease_owner = ?", [owner]
    changed = await db.execute(
        f"UPDATE jobs SET state = ?, finished_at = ?, error = ?, result = ?, "
        f"lease_expires_at = NULL WHERE id = ? AND {condition}",
        (state.value, time.time(), error, result, job_id, *params),
    )
    if changed != 1:
        raise LeaseLost(f"job {job_id} is not active for this worker")
    job = await get(db, job_id)
    assert job is not None
    return job


async def complete(db: Db, job_id: int, owner: str, result: str | None = None) -> Job:
    return await _finish(db, job_id, JobState.DONE, owner=owner, result=result)


async def fail(db: Db, job_id: int, owner: str, error: str) -> Job:
    # Model text can carry control characters; stored errors are shown to people.
    cleaned = _CONTROL.sub(" ", error).strip()[:1000]
    return await _finish(db, job_id, JobState.FAILED, owner=owner, error=cleaned)


async def cancel(db: Db, job_id: int, reason: str = "cancelled by the owner") -> Job:
    """Cancel a queued or running job, whoever holds it."""
    return await _finish(db, job_id, JobState.CANCELLED, owner=None, error=reason)


@dataclass(frozen=True)
class Recovered:
    job: Job
    requeued: bool
    reason: str


async def move_to_card_lanes(db: Db, old_lanes: dict[str, str], default_lane: str) -> int:
    """Queued jobs of these kinds still in their old lane (kind -> lane) move to their
    card's lane, or to `default_lane` for a card without one; returns how many moved."""
    moved = 0
    for kind, old_lane in old_lanes.items():
        moved += await db.execute(
            "UPDATE jobs SET lane = coalesce("
            "(SELECT c.lane FROM cards c WHERE c.id = jobs.card_id), ?) "
            "WHERE kind = ? AND state = 'queued' AND lane = ?",
            (default_lane, kind, old_lane),
        )
    return moved


def requeued_when_orphaned(job: Job) -> bool:
    """Whether `recover` queues this job again (else it fails it: its result is unknown)."""
    return is_repeatable(job.kind) and job.attempts < MAX_AUTOMATIC_ATTEMPTS


async def recover(
    db: Db, *, now: float | None = None, dead_owners: tuple[str, ...] = ()
) -> list[Recovered]:
    """Deal with running jobs nobody looks after any more.

    A job is orphaned when its lease expired, when its owner's registration expired
    (see `workers.py`: a worker that stopped, or stopped heartbeating), or when its
    owner is in `dead_owners` (a worker of this host whose process is gone: no need
    to wait for its lease). Read-only kinds go back to the queue; the others fail with a reason a
    person can act on.
    """
    now = time.time() if now is None else now
    marks = ", ".join("?" * len(dead_owners)) or "NULL"
    rows = await db.fetchall(
        "SELECT * FROM jobs WHERE state = 'running' AND (lease_expires_at < ? "
        "OR lease_owner IS NULL "
        "OR lease_owner IN (SELECT id FROM workers WHERE expires_at < ?) "
        f"OR lease_owner IN ({marks})) ORDER BY id FOR UPDATE SKIP LOCKED",
        (now, now, *dead_owners),
    )
    recovered = []
    for job in map(Job.from_row, rows):
        if requeued_when_orphaned(job):
            reason = f"the worker stopped during attempt {job.attempts}; queued again"
            await db.execute(
                "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL, "
                "error = ? WHERE id = ?",
                (reason, job.id),
            )
            requeued = True
        else:
            reason = (
                f"the worker stopped during this {job.kind} run (attempt {job.attempts}); "
                "its result is unknown"
            )
            await db.execute(
                "UPDATE jobs SET state = 'failed', finished_at = ?, lease_expires_at = NULL, "
                "error = ? WHERE id = ?",
                (now, reason, job.id),
            )
            requeued = False
        fresh = await get(db, job.id)
        assert fresh is not None
        recovered.append(Recovered(fresh, requeued, reason))
    return recovered


async def record_process(db: Db, job_id: int, identity: str | None) -> None:
    await db.execute("UPDATE jobs SET process = ? WHERE id = ?", (identity, job_id))


async def active_card_slugs(db: Db) -> dict[int, str]:
    rows = await db.fetchall(
        "SELECT c.id, c.slug FROM cards c JOIN jobs j ON j.card_id = c.id "
        "WHERE j.state IN ('queued', 'running')"
    )
    return {r[0]: r[1] for r in rows}


async def listing(db: Db, states: tuple[str, ...] = ACTIVE) -> list[Job]:
    marks = ", ".join("?" * len(states))
    rows = await db.fetchall(f"SELECT * FROM jobs WHERE state IN ({marks}) ORDER BY id", states)
    return [Job.from_row(r) for r in rows]
