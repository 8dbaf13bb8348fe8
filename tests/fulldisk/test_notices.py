"""What the rooms hear of a store's episodes: a disk that fills and frees over and
over is said at most once per quiet period, and its end only after it was said."""

from __future__ import annotations

import asyncio

from chatbot.notify.notifier import Destination
from chatbot.notify.store_health import StoreHealthNotices
from chatbot.store.chat import Post
from chatbot.store.health import StoreHealth


async def test_a_flapping_disk_is_said_once_per_quiet_period() -> None:
    said: list[Post] = []

    async def send_now(post: Post) -> None:
        said.append(post)

    now = [1000.0]
    notices = StoreHealthNotices(
        send_now,
        [
            Destination("xmpp", "board@conference.example.org"),
            Destination("console", "me", "person"),
        ],
        quiet_s=600,
        clock=lambda: now[0],
    )
    health = StoreHealth("board.sqlite3")  # no probe: the test says when writes work
    notices.attach(health)

    async def settle() -> None:
        await asyncio.gather(*notices._tasks)

    health.failed("the disk holding it is full (0 bytes free)")
    await settle()
    assert [p.text.split(":")[0] for p in said] == [
        "⚠️ The board cannot save anything right now"
    ] * 2
    assert {p.target for p in said} == {"board@conference.example.org", "me"}
    said.clear()
    now[0] += 30
    health.worked()
    await settle()
    assert [p.text.split(" (")[0] for p in said] == ["✅ The board saves again"] * 2
    said.clear()
    # Full again within the quiet period: the log has it, the rooms are not told again,
    # and so its end is not told either.
    now[0] += 60
    health.failed("the disk holding it is full (0 bytes free)")
    health.worked()
    await settle()
    assert said == []
    now[0] += 600
    health.failed("the disk holding it is full (12 bytes free)")
    await settle()
    assert len(said) == 2 and "12 bytes free" in said[0].text
