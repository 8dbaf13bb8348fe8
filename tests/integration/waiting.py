"""Wait for the first item of a queue that a test expects, and say what came instead.

The bot's inbox and both chat peers wait this way: a timeout names who waited, for how
long, what arrived meanwhile and what the earlier waits took, so that a failure under load
reads without a rerun. (Without the last, a wait for a run's closing edit read as if the
run's status message had never come: the earlier waits had taken it.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: How many of the earlier waits' matches a timeout names (the latest).
TAKEN_SHOWN = 6


async def first_matching(
    queue: asyncio.Queue[T],
    matches: Callable[[T], bool],
    *,
    within: float,
    who: str,
    shown: Callable[[T], str],
    keep: bool = True,
    also: Callable[[], str] = str,
    taken: list[str] | None = None,
) -> T:
    """The first item `matches` accepts. The others are put back for a later wait when
    `keep` (a peer's messages, which a test reads in any order); else they are passed
    (the bot's events, read in order). `taken`, the waiter's own list, records each match
    as `shown` says it, and a timeout names the last few."""
    passed: list[T] = []
    try:
        async with asyncio.timeout(within):
            while True:
                item = await queue.get()
                if matches(item):
                    if taken is not None:
                        taken.append(shown(item))
                    return item
                passed.append(item)
    except TimeoutError:
        seen = [shown(item) for item in passed]
        before = f"; taken by earlier waits: {taken[-TAKEN_SHOWN:]}" if taken else ""
        raise TimeoutError(
            f"{who}: nothing matched in {within:g} s; received meanwhile: {seen}{before}{also()}"
        ) from None
    finally:
        if keep:
            # Ahead of what came after them, so that a later wait reads them in order.
            later = [queue.get_nowait() for _ in range(queue.qsize())]
            for item in (*passed, *later):
                queue.put_nowait(item)
