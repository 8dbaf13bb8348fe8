"""The shared pieces: identities, the in-memory store, back-off, status events."""

from __future__ import annotations

import pytest

from chatbot.transports.base import (
    Backoff,
    Identity,
    MemoryStateStore,
    ProbeReport,
    Room,
    RoomReport,
    StateStore,
)
from chatbot.transports.console import ConsoleTransport


def test_identities_compare_by_transport_and_id_only() -> None:
    assert Identity("xmpp", "a@b") == Identity("xmpp", "a@b")
    assert Identity("xmpp", "a@b") != Identity("matrix", "a@b")
    assert Identity("xmpp", "a@b") != Room("xmpp", "a@b")
    assert str(Identity("matrix", "@o:l")) == "matrix:@o:l"


async def test_memory_store_marks_each_id_once_per_transport() -> None:
    store = MemoryStateStore()
    assert isinstance(store, StateStore)
    assert await store.mark_processed("xmpp", "1")
    assert not await store.mark_processed("xmpp", "1")
    assert await store.mark_processed("matrix", "1")
    assert await store.get_value("k") is None
    await store.set_value("k", "v")
    assert await store.get_value("k") == "v"


def test_backoff_doubles_up_to_the_cap_and_resets() -> None:
    b = Backoff(initial=1, cap=8, jitter=0)
    assert [b.next_delay() for _ in range(6)] == [1, 2, 4, 8, 8, 8]
    b.reset()
    assert b.next_delay() == 1


def test_backoff_jitter_stays_near_the_schedule() -> None:
    b = Backoff(initial=10, cap=10, jitter=0.1)
    assert all(9 <= b.next_delay() <= 11 for _ in range(50))


def test_probe_report_ok_needs_every_room_postable() -> None:
    good = RoomReport("r", True, can_post=True, sees_real_ids=True)
    assert ProbeReport("xmpp", "bot", True, True, (good,)).ok
    assert not ProbeReport("xmpp", "bot", True, True, (good, RoomReport("s", False))).ok
    assert not ProbeReport("xmpp", "bot", True, False).ok


async def test_status_handlers_hear_online_and_offline() -> None:
    heard: list[tuple[str, bool]] = []
    console = ConsoleTransport()
    console.on_status(lambda name, online: heard.append((name, online)))
    await console.start()
    await console.wait_online()
    await console.stop()
    assert heard == [("console", True), ("console", False)]


@pytest.mark.parametrize("value", ["", None])
def test_redacting_repr_shows_empty_secrets_as_empty(value: str | None) -> None:
    from chatbot.transports.matrix.transport import MatrixSettings

    assert "access_token=" + repr(value) in repr(
        MatrixSettings(homeserver="h", user_id="@b:l", access_token=value)
    )


async def test_a_bounded_memory_store_forgets_the_oldest() -> None:
    from chatbot.transports.base import MemoryStateStore

    store = MemoryStateStore(limit=3)
    for n in range(5):
        assert await store.mark_processed("x", f"e{n}")
        await store.set_value(f"k{n}", "v")
    assert [k for _, k in store.processed] == ["e2", "e3", "e4"]
    assert list(store.values) == ["k2", "k3", "k4"]
    assert not await store.mark_processed("x", "e4")
