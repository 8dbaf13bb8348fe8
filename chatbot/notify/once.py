"""Things about the configuration the owners hear once, in the rooms: once per value,
not once per start (a bot restarted by its service manager must not repeat it, and a
changed value is news again). The value told last is kept in the store."""

from __future__ import annotations

from chatbot.notify.poster import Poster
from chatbot.store import kv


async def tell_once(notifier: Poster, key: str, value: str, body: str | None, purpose: str) -> bool:
    """Post `body` unless `value` was told last under `key`; None: nothing to tell now
    (the value is still remembered, so that its return is news). True when posted."""
    async with notifier.store.transaction() as db:
        if await kv.get_value(db, key) == value:
            return False
        await kv.set_value(db, key, value)
        if body is None:
            return False
        await notifier.post(db, body, card=None, purpose=purpose, mention_owners=True)
    return True
