"""How a service's parts start and stop: in order, each part one async context manager.

aiohttp's `cleanup_ctx` idea: a part starts when it is entered and stops when it is
left; an `AsyncExitStack` enters the parts in order and leaves them in the reverse
order, also when a later part fails to start, so nothing started is left running.

The loops that live as long as the service (the worker, the outbox sender, ...) run
in one `TaskGroup`: when one fails, the others are cancelled before any part stops,
and the failure is raised as itself, not inside an ExceptionGroup, so the CLI
reports it as it always did (`StoreError` -> "chatbot: ...", exit status 1).
Helper tasks that may end or fail on their own without ending the service (telling
systemd it is ready, noticing the console's end) are `background` parts instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Coroutine, Mapping
from typing import Any

log = logging.getLogger(__name__)

# What a loop returns is not looked at (stop.wait() returns True).
Loop = Coroutine[Any, Any, object]


async def run_for_life(loops: Mapping[str, Loop]) -> None:
    """Run `loops` until every one has returned (they watch the service's stop event).

    The first loop that raises stops the others (cancelled) and its exception is
    raised bare, as `asyncio.gather` raised it before.
    """
    try:
        async with asyncio.TaskGroup() as group:
            for name, loop in loops.items():
                group.create_task(loop, name=name)
    except BaseExceptionGroup as failed:
        # Only the first failure stops the service; any other is what cancelling its
        # siblings brought about (or a second failure, which gather did not raise either).
        raise failed.exceptions[0] from None


async def _unfailing(name: str, work: Loop) -> None:
    try:
        await work
    except Exception:
        # A helper's failure must not end the service; said once, with its traceback.
        log.exception("%s failed; serving on without it", name)


@contextlib.asynccontextmanager
async def background(name: str, work: Loop) -> AsyncIterator[asyncio.Task[None]]:
    """`work` as a task while the part is entered: cancelled (and awaited) when it is left.

    It may end early or fail without stopping the service; a failure is logged.
    """
    task = asyncio.create_task(_unfailing(name, work), name=name)
    try:
        yield task
    finally:
        task.cancel()
        # wait(), not await: the task's own cancellation is not this one's.
        await asyncio.wait({task})
