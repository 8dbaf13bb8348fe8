"""The service's parts and loops (app/lifecycle.py): loops that live as long as the
service, helpers that may fail on their own, parts left in the reverse order."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import pytest

from chatbot.app.lifecycle import background, run_for_life
from chatbot.store import StoreError


async def test_the_loops_return_when_stop_is_set() -> None:
    stop = asyncio.Event()
    ended: list[str] = []

    async def loop(name: str) -> None:
        await stop.wait()
        ended.append(name)

    running = asyncio.create_task(run_for_life({"a": loop("a"), "b": loop("b")}))
    await asyncio.sleep(0)
    assert not running.done()
    stop.set()
    await asyncio.wait_for(running, 5)
    assert sorted(ended) == ["a", "b"]


async def test_a_failing_loop_stops_the_others_and_is_raised_bare() -> None:
    """As gather raised it: the CLI catches a StoreError, not an ExceptionGroup."""
    cancelled = asyncio.Event()

    async def endless() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def failing() -> None:
        await asyncio.sleep(0)
        raise StoreError("the database is gone")

    with pytest.raises(StoreError, match="the database is gone"):
        await asyncio.wait_for(run_for_life({"worker": endless(), "outbox": failing()}), 5)
    assert cancelled.is_set()


async def test_a_background_helper_that_fails_is_logged_and_stops_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken() -> None:
        raise OSError("no socket")

    with caplog.at_level(logging.ERROR, logger="chatbot.app.lifecycle"):
        async with background("readiness", broken()) as task:
            await asyncio.wait({task})
            assert task.exception() is None  # swallowed, after it was said
    assert "readiness failed; serving on without it" in caplog.text
    assert "OSError: no socket" in caplog.text


async def test_a_background_helper_still_waiting_is_cancelled_when_left() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def waiting() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async with background("console session end", waiting()) as task:
        await started.wait()
    assert task.cancelled() and cancelled.is_set()


async def test_parts_are_left_in_the_reverse_order_also_when_a_loop_fails() -> None:
    said: list[str] = []

    @contextlib.asynccontextmanager
    async def part(name: str) -> AsyncIterator[None]:
        said.append(f"start {name}")
        try:
            yield
        finally:
            said.append(f"stop {name}")

    async def failing() -> None:
        said.append("loop fails")
        raise StoreError("gone")

    with pytest.raises(StoreError):
        async with contextlib.AsyncExitStack() as parts:
            for name in ("web", "transports"):
                await parts.enter_async_context(part(name))
            await run_for_life({"worker": failing()})
    assert said == ["start web", "start transports", "loop fails", "stop transports", "stop web"]
