"""The transports' replay guard in the real store (`TransportState`), on both engines.

A transport asks `mark_processed` before it hands an event on: True runs the
handler, False drops a replay (a Matrix batch synced again, an XMPP stanza read
back from the archive). It must hold per transport and across a restart.
"""

from __future__ import annotations

from chatbot.store import Store
from chatbot.store.kv import TransportState
from chatbot.transports.base import StateStore


async def _open(database) -> Store:
    return await Store.open(database.value, password_file=database.password_file)


async def test_each_event_is_marked_once_per_transport_across_a_reopen(database) -> None:
    store = await _open(database)
    try:
        state = TransportState(store)
        assert isinstance(state, StateStore)
        assert await state.mark_processed("xmpp", "stanza-1") is True
        assert await state.mark_processed("xmpp", "stanza-1") is False
        assert await state.mark_processed("xmpp", "stanza-1") is False
        # The same id from another network is another event.
        assert await state.mark_processed("matrix", "stanza-1") is True
        assert await state.mark_processed("matrix", "stanza-1") is False
        assert await state.mark_processed("xmpp", "stanza-2") is True
        await state.set_value("matrix:@bot:l:next_batch", "s1")
    finally:
        await store.close()

    reopened = await _open(database)
    try:
        state = TransportState(reopened)
        # What was marked before the restart stays marked, for each transport.
        assert await state.mark_processed("xmpp", "stanza-1") is False
        assert await state.mark_processed("matrix", "stanza-1") is False
        assert await state.mark_processed("xmpp", "stanza-2") is False
        assert await state.mark_processed("matrix", "stanza-2") is True
        assert await state.get_value("matrix:@bot:l:next_batch") == "s1"
        rows = await reopened.reader.fetchall(
            "SELECT transport, event_id FROM processed_events ORDER BY transport, event_id"
        )
        assert [tuple(row) for row in rows] == [
            ("matrix", "stanza-1"),
            ("matrix", "stanza-2"),
            ("xmpp", "stanza-1"),
            ("xmpp", "stanza-2"),
        ]
    finally:
        await reopened.close()
