"""The board's side for the worker: claiming jobs, leases, and what a run leaves behind.

The worker reaches the store only through these, like chat and the CLI reach it
through the board's reads and moves; each call is one short transaction or one
read on the reader connection.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from chatbot.domain.roles import ROLES, ProfileFrom, role_lane
from chatbot.store import Store, StoreUnwritable, telemetry
from chatbot.store import jobs as job_store
from chatbot.store import workers as worker_store
from chatbot.store.jobs import Job
from chatbot.store.telemetry import RunRecord
from runners.process import process_identity

log = logging.getLogger(__name__)
T = TypeVar("T")


def _alive(identity: str) -> bool:
    """Whether the process `pid:start-time` still runs (on this host)."""
    pid = identity.split(":", 1)[0]
    return pid.isdigit() and process_identity(int(pid)) == identity


# Roles that queue in their card's lane; a job queued before its role did (the fixer,
# before the card-lane fixer) may still sit in the role's own lane.
_FORMER_LANES = {
    role.name: role_lane(role.name) for role in ROLES if role.profile_from is ProfileFrom.LANE
}


class BoardQueue:
    """The worker's side of the queue (`board.queue`): lanes, claims, leases, workers, and
    the rows a run writes of itself."""

    def __init__(self, store: Store, *, default_lane: str):
        self.store = store
        self.default_lane = default_lane

    async def move_to_card_lanes(self) -> int:
        """Jobs queued in a lane no worker serves any more go to the lane their role
        runs in now (the card's, else the first configured): at start, so an upgrade
        leaves no job waiting for ever."""
        async with self.store.transaction() as db:
            return await job_store.move_to_card_lanes(db, _FORMER_LANES, self.default_lane)

    async def queued_lanes(self, lanes: Iterable[str]) -> set[str]:
        """Which of `lanes` have a job waiting: one read, before any claim."""
        return await job_store.queued_lanes(self.store.reader, tuple(lanes))

    async def claimable_lanes(self, limits: dict[str, int]) -> set[str]:
        """Which lanes have a job waiting and a free slot on all hosts together: one read,
        so a worker does not try (and fail) to claim in a lane that is full elsewhere."""
        return await job_store.claimable_lanes(self.store.reader, limits)

    async def claim(
        self,
        lane: str,
        owner: str,
        lease_s: float,
        *,
        limit: int | None = None,
        host: str | None = None,
    ) -> Job | None:
        """A job of `lane`, unless the lane runs `limit` jobs on all hosts together."""
        async with self.store.transaction(exclusive=False) as db:
            return await job_store.claim(db, lane, owner, lease_s, limit=limit, host=host)

    async def wait_for_limit(self, job: Job, owner: str, not_before: float, reason: str) -> Job:
        """The job's run met the provider's quota or rate limit: queued again, claimed
        not before `not_before`, its attempt not counted."""
        async with self.store.transaction(exclusive=False) as db:
            return await job_store.wait(db, job.id, owner, not_before, reason)

    async def next_not_before(self, lanes: Iterable[str]) -> float | None:
        return await job_store.next_not_before(self.store.reader, tuple(lanes))

    async def heartbeat(self, job: Job, owner: str, lease_s: float) -> None:
        """Extend the lease; LeaseLost when the job is not ours any more (cancelled)."""
        async with self.store.transaction(exclusive=False) as db:
            await job_store.heartbeat(db, job.id, owner, lease_s)

    async def worker_alive(
        self, worker: str, *, host: str, process: str | None, lanes: list[str], lease_s: float
    ) -> tuple[str, ...]:
        """Renew this worker's registration; returns the workers of this host found dead
        (their process is gone), so their jobs can be recovered at once."""
        async with self.store.transaction(exclusive=False) as db:
            await worker_store.beat(
                db, worker, host=host, process=process, lanes=lanes, lease_s=lease_s
            )
            dead = await worker_store.dead_on_host(db, host, _alive)
            await worker_store.stopped(db, dead)
        return tuple(dead)

    async def worker_stopped(self, worker: str) -> None:
        async with self.store.transaction(exclusive=False) as db:
            await worker_store.stopped(db, [worker])

    async def stopped(self, job_ids: Iterable[int]) -> list[int]:
        """Of these jobs, those cancelled (from here or elsewhere). A job that ended by
        its own result is not one: its task still closes what it opened."""
        return await job_store.cancelled(self.store.reader, tuple(job_ids))

    # A run's own rows (its telemetry, its process) depend on nothing else on the board:
    # they need not wait for other hosts' moves, and the move that follows wakes whoever
    # shows them.

    async def saved(self, write: Callable[[], Awaitable[T]], what: str) -> T:
        """`write()`, again and again while the database takes no writes (a full disk).

        A run's result, or the failure of its job, is worth more than the time it
        waits: each write is all or nothing, so repeating it once the store's probe
        found writes working again applies it exactly once.
        """
        while True:
            try:
                return await write()
            except StoreUnwritable as error:
                log.warning("%s waits until the database takes writes: %s", what, error)
                await self.store.health.wait_writable()

    async def record_run(self, record: RunRecord) -> int:
        async with self.store.transaction(exclusive=False) as db:
            return await telemetry.record(db, record)

    async def record_process(self, job: Job, identity: str | None) -> None:
        async with self.store.transaction(exclusive=False) as db:
            await job_store.record_process(db, job.id, identity)
