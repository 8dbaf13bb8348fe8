"""Small persisted values (sync tokens, device ids) and processed-event ids.

`TransportState` gives the transports exactly the three calls they need, so they
stay ignorant of cards and of SQL.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from chatbot.store.db import Db, Store, StoreUnwritable


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


# What a transport could not save while the database took no writes, at most this many.
UNSAVED_LIMIT = 10_000


class TransportState:
    """The store seen from a transport.

    While the database takes no writes (a full disk: `StoreUnwritable`), what a
    transport would save is kept in a bounded memory instead: its events still reach
    the chat, which can answer reads and say why it refuses changes, and an event is
    still handled once in this process. (A restart then may read back such an event
    from the server's archive; a change it asked for was refused the first time.)
    """

    def __init__(self, store: Store):
        self._store = store
        self._values: OrderedDict[str, str] = OrderedDict()
        self._processed: OrderedDict[tuple[str, str], None] = OrderedDict()

    async def get_value(self, key: str) -> str | None:
        if key in self._values:
            return self._values[key]
        return await get_value(self._store.reader, key)

    async def set_value(self, key: str, value: str) -> None:
        try:
            await self._store.write_one(_SET_VALUE, (key, value, time.time()))
        except StoreUnwritable:
            _remember(self._values, key, value)
            return
        self._values.pop(key, None)

    async def mark_processed(self, transport: str, event_id: str) -> bool:
        # On every incoming event, before its handler: one statement, one round trip.
        item = (transport, event_id)
        if item in self._processed:
            return False
        try:
            return bool(await self._store.write_one(_MARK, (transport, event_id, time.time())))
        except StoreUnwritable:
            _remember(self._processed, item, None)
            return True


def _remember(table: OrderedDict[Any, Any], key: object, value: object) -> None:
    table[key] = value
    table.move_to_end(key)
    while len(table) > UNSAVED_LIMIT:
        table.popitem(last=False)
