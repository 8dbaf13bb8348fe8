"""The board's side for the worker: claiming jobs, leases, and what a run leaves behind.

The worker reaches the store only through these, like chat and the CLI reach it
through the board's reads and moves; each call is one short transaction or one
read on the reader connection.
"""

from __future__ import annotations

from collections.abc import Iterable

from chatbot.store import Store, telemetry
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from chatbot.store.cards import Card
from chatbot.store.jobs import Job
from chatbot.store.telemetry import RunRecord


class BoardQueue:
    store: Store

    async def queued_lanes(self, lanes: Iterable[str]) -> set[str]:
        """Which of `lanes` have a job waiting: one read, before any claim."""
        return await job_store.queued_lanes(self.store.reader, tuple(lanes))

    async def claim(self, lane: str, owner: str, lease_s: float) -> Job | None:
        async with self.store.transaction() as db:
            return await job_store.claim(db, lane, owner, lease_s)

    async def heartbeat(self, job: Job, owner: str, lease_s: float) -> None:
        """Extend the lease; LeaseLost when the job is not ours any more (cancelled)."""
        async with self.store.transaction() as db:
            await job_store.heartbeat(db, job.id, owner, lease_s)

    async def stopped(self, job_ids: Iterable[int]) -> list[int]:
        """Of these jobs, those no longer running (cancelled from here or elsewhere)."""
        return await job_store.not_running(self.store.reader, tuple(job_ids))

    async def card_by_id(self, card_id: int) -> Card | None:
        return await card_store.get_by_id(self.store.reader, card_id)

    async def slug_taken(self, slug: str) -> bool:
        return await card_store.get(self.store.reader, slug) is not None

    async def record_run(self, record: RunRecord) -> int:
        async with self.store.transaction() as db:
            return await telemetry.record(db, record)

    async def record_process(self, job: Job, identity: str | None) -> None:
        async with self.store.transaction() as db:
            await job_store.record_process(db, job.id, identity)
