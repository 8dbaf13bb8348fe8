"""`/healthz`: the bot's state for monitoring, without a token and without card data.

Not ok (503) while a chat server is away or the database takes no writes (a full
disk), so that a plain HTTP check notices.
"""

from __future__ import annotations

from typing import Any

from chatbot.board.web_reads import QueueHealth


def _age(since: float | None, now: float) -> float | None:
    return None if since is None else round(now - since, 1)


def health_body(
    up: dict[str, bool],
    queue: QueueHealth,
    store: Any,
    live_pages: int,
    now: float,
) -> dict[str, Any]:
    """`store`: the store's health (writable, problem, since)."""
    return {
        "ok": all(up.values()) and store.writable,
        "transports": up,
        "store": {
            "writable": store.writable,
            "problem": store.problem,
            "since_s": _age(store.since, now),
        },
        "queue": {
            "queued": queue.queued,
            "running": queue.running,
            "oldest_queued_age_s": _age(queue.oldest_queued_at, now),
        },
        "live_pages": live_pages,
    }
