"""The owners hear once, in the rooms, that the configuration uses deprecated keys.

Once per set of keys, not once per start: a bot restarted by its service manager
must not repeat it, and a file that gains another deprecated key is told again.
The set told last is kept in the store, so it survives restarts.
"""

from __future__ import annotations

from collections.abc import Sequence

from chatbot.notify.talk import Poster
from chatbot.store import kv

TOLD_KEY = "config:deprecated_told"


async def tell_owners(notifier: Poster, found: Sequence[tuple[str, str]]) -> bool:
    """`found`: (key, the line saying what replaces it) each. True when posted now."""
    keys = "\n".join(sorted(key for key, _ in found))
    async with notifier.store.transaction() as db:
        if await kv.get_value(db, TOLD_KEY) == keys:
            return False
        # Also when none are left: a key that comes back later is news again.
        await kv.set_value(db, TOLD_KEY, keys)
        if not found:
            return False
        lines = "\n".join(f"- {line}" for _, line in found)
        body = notifier.t("config_deprecated", count=len(found), lines=lines)
        await notifier.post(db, body, card=None, purpose="deprecated", mention_owners=True)
    return True
