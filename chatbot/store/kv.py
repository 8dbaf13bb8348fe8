"""Small persisted values (sync tokens, device ids) and processed-event ids.

`TransportState` gives the transports exactly the three calls they need, so they
stay ignorant of cards and of SQL.
"""

from __future__ import annotations

import time

from chatbot.store.db import Db, Store


async def get_value(db: Db, key: str) -> str | None:
    row = await db.fetchone("SELECT value FROM kv WHERE key = ?", (key,))
    return row[0] if row else None


_SET_VALUE = (
    "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"
)
_MARK = (
    "INSERT INTO processed_events (transport, event_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
)


async def set_value(db: Db, key: str, value: str) -> None:
    await db.execute(_SET_VALUE, (key, value, time.time()))


async def mark_processed(db: Db, transport: str, event_id: str) -> bool:
    return bool(await db.execute(_MARK, (transport, event_id, time.time())))


class TransportState:
    """The store seen from a transport."""

    def __init__(self, store: Store):
        self._store = store

    async def get_value(self, key: str) -> str | None:
        return await get_value(self._store.reader, key)

    async def set_value(self, key: str, value: str) -> None:
        await self._store.write_one(_SET_VALUE, (key, value, time.time()))

    async def mark_processed(self, transport: str, event_id: str) -> bool:
        # On every incoming event, before its handler: one statement, one round trip.
        return bool(await self._store.write_one(_MARK, (transport, event_id, time.time())))
