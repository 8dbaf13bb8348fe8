"""The owners hear once, in the rooms, that the configuration uses deprecated keys.

Once per set of keys, not once per start: a bot restarted by its service manager
must not repeat it, and a file that gains another deprecated key is told again.
The set told last is kept in the store, so it survives restarts.
"""

from __future__ import annotations

from collections.abc import Sequence

from chatbot.domain.counted import counted
from chatbot.notify.once import tell_once
from chatbot.notify.poster import Poster

TOLD_KEY = "config:deprecated_told"


async def tell_owners(notifier: Poster, found: Sequence[tuple[str, str]]) -> bool:
    """`found`: (key, the line saying what replaces it) each. True when posted now."""
    keys = "\n".join(sorted(key for key, _ in found))
    # Also when none are left: a key that comes back later is news again.
    lines = "\n".join(f"- {line}" for _, line in found)
    count = counted(len(found), "deprecated key", notifier.locale)
    body = notifier.t("config_deprecated", count=count, lines=lines) if found else None
    return await tell_once(notifier, TOLD_KEY, keys, body, "deprecated")


async def tell_unconfined(notifier: Poster, sandbox: str, lanes: Sequence[str]) -> bool:
    """With `[bot] sandbox = "off"` and lanes whose CLI has no protection of its own
    (gemini's yolo), the owners hear once that those agents run unconfined (issue 32);
    codex and claude keep their own, and `chatbot check` says so."""
    body = None
    if sandbox == "off" and lanes:
        body = notifier.t("config_sandbox_off", lanes=", ".join(lanes) or "-")
    value = f"{sandbox}:{','.join(lanes)}"
    return await tell_once(notifier, "config:sandbox_off_told", value, body, "sandbox_off")
