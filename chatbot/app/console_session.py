"""What a console session adds to serving: piped input read at a person's pace, and a
sign-in link to the web board at start (the person at the terminal is its owner).

A person at the terminal reads the answer before typing on; a script piped in would
send its next line while the planner still thinks ("There is no card ..."). So each
piped line waits until the bot has settled: no run under way or queued, except one
that waits for the owner (an approval it asked for) or for a provider's quota, and
every answer printed. The end of the input waits the same way, so `printf ... |
scripts/run` ends with the last answer, not with a run cut off.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from chatbot.board import BoardService
from chatbot.store.jobs import JobState

# Commits of this process wake the wait at once; this is only the fallback for a
# worker on another host whose commits this process hears of late.
RECHECK_S = 1.0


async def _quiet(board: BoardService) -> bool:
    jobs = await board.reads.active_jobs()
    if not jobs:
        return True
    slugs = await board.reads.job_slugs()
    now = time.time()
    for job in jobs:
        if job.not_before is not None and job.not_before > now:
            continue  # waits for a provider's quota: nothing to wait for here
        slug = slugs.get(job.card_id) if job.card_id is not None else None
        if job.state is JobState.RUNNING and slug is not None:
            _, asked = await board.talk.open_approvals(slug)
            if asked:
                continue  # waits for the owner: the next line may be the answer
        return False
    return True


def pacer(
    board: BoardService, drained: Callable[[], Awaitable[None]]
) -> Callable[[], Awaitable[None]]:
    """The wait before each piped line: until `_quiet` holds and `drained` returned."""

    async def settled() -> None:
        changed = asyncio.Event()
        board.store.on_commit.append(changed.set)
        try:
            while True:
                changed.clear()
                if await _quiet(board):
                    await drained()
                    if await _quiet(board):
                        return
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(RECHECK_S):
                        await changed.wait()
        finally:
            board.store.on_commit.remove(changed.set)

    return settled


async def sign_in_line(board: BoardService, owner: str, public_url: str | None) -> str | None:
    """A line with a one-time sign-in link for the console's owner (None: no address)."""
    from chatbot.board.web_sessions import LINK_VALID_S
    from chatbot.chat.web_signin import SIGN_IN_PATH

    if not public_url:
        return None
    link = await board.web_sessions.issue(owner)
    minutes = int(LINK_VALID_S // 60)
    return (
        f"web board: {public_url}{SIGN_IN_PATH}{link.token} (signs you in once, within "
        f"{minutes} minutes; /web makes another)"
    )
