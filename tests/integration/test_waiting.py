"""The one wait the bot's inbox and both chat peers share (waiting.py)."""

from __future__ import annotations

import asyncio

import pytest

from tests.integration.waiting import first_matching


async def test_the_match_is_taken_and_the_others_stay_for_a_later_wait() -> None:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for item in ("typing", "status", "done"):
        queue.put_nowait(item)
    got = await first_matching(queue, lambda s: s == "status", within=1, who="peer", shown=str)
    assert got == "status"
    assert [queue.get_nowait() for _ in range(queue.qsize())] == ["typing", "done"]


async def test_without_keep_the_passed_items_are_gone() -> None:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for item in ("a", "b"):
        queue.put_nowait(item)
    assert (
        await first_matching(queue, lambda s: s == "b", within=1, who="bot", shown=str, keep=False)
        == "b"
    )
    assert queue.empty()


async def test_a_timeout_says_who_waited_how_long_and_what_came() -> None:
    queue: asyncio.Queue[str] = asyncio.Queue()
    queue.put_nowait("the review post")
    with pytest.raises(TimeoutError) as caught:
        await first_matching(
            queue,
            lambda s: s == "never",
            within=0.05,
            who="owner@localhost",
            shown=str.upper,
            also=lambda: "; sync state: ok",
        )
    assert str(caught.value) == (
        "owner@localhost: nothing matched in 0.05 s; received meanwhile: ['THE REVIEW POST']"
        "; sync state: ok"
    )
    assert queue.get_nowait() == "the review post"


async def test_a_timeout_names_what_the_earlier_waits_took() -> None:
    queue: asyncio.Queue[str] = asyncio.Queue()
    taken: list[str] = []
    for item in ("run started", "edit 1", "notice"):
        queue.put_nowait(item)
    for wanted in ("run started", "edit 1"):
        await first_matching(
            queue, lambda s, w=wanted: s == w, within=1, who="peer", shown=str, taken=taken
        )
    with pytest.raises(TimeoutError) as caught:
        await first_matching(
            queue, lambda s: s == "last edit", within=0.05, who="peer", shown=str, taken=taken
        )
    assert str(caught.value) == (
        "peer: nothing matched in 0.05 s; received meanwhile: ['notice']"
        "; taken by earlier waits: ['run started', 'edit 1']"
    )
