"""A run the provider's quota or rate limit stopped: the job waits, the room is told.

Nothing is wrong with the work, so the card keeps its phase and the attempt is not
counted (`jobs.wait`): the job goes back to the queue and is claimed again at the reset
time the CLI gave, else after `[bot] quota_retry_s`. The worker wakes at the earliest
such time (`next_wake`).
"""

from __future__ import annotations

import contextlib
import logging
import time

from chatbot.board import Job, LeaseLost
from chatbot.board.ports import WorkerSide
from chatbot.board.run_events import ProviderLimited
from chatbot.pipeline.context import JobContext, RunLimited
from runners.runtimes import Limited

log = logging.getLogger(__name__)


def not_before(limited: Limited, retry_s: float, now: float) -> float:
    """When to try again: the CLI's reset time if it gave one, else `retry_s` from now."""
    if limited.reset_at is not None:
        return max(limited.reset_at, now)
    return now + retry_s


async def wait_for_reset(ctx: JobContext, job: Job, owner: str, stopped: RunLimited) -> None:
    at = not_before(stopped.limited, ctx.config.bot.quota_retry_s, time.time())
    log.info(
        "job %s (%s): %s is limited (%s); queued again for %.0f s",
        job.id,
        job.kind,
        stopped.runtime,
        stopped.limited.reason,
        at - time.time(),
    )
    reason = f"{stopped.runtime}: quota or rate limit: {stopped.limited.reason}"

    async def record() -> None:
        with contextlib.suppress(LeaseLost):
            await ctx.board.queue.wait_for_limit(job, owner, at, reason)

    await ctx.board.queue.saved(record, f"job {job.id} ({job.kind}): its wait for the reset")
    await ctx.tell(ProviderLimited(ctx.card, stopped.runtime, stopped.limited, False, at))


async def next_wake(board: WorkerSide, lanes: list[str], poll_s: float) -> float:
    """How long the worker may sleep: `poll_s`, or less when a waiting job is due sooner."""
    due = await board.queue.next_not_before(lanes)
    if due is None:
        return poll_s
    return max(0.0, min(poll_s, due - time.time()))
