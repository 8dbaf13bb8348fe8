"""Tells every room when the database stops taking writes, and when it takes them again.

These posts cannot wait in the outbox (it is a table of the same database), so they
go to the transports directly, once: a room that is away then misses them, and
`/status`, `/healthz` and `chatbot check` still say how the store is. A disk that
fills and frees over and over must not flood the rooms: the trouble is said at
most once per `quiet_s`, and its end only after the trouble was said.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from chatbot.notify.format import duration
from chatbot.notify.notifier import Destination
from chatbot.notify.texts import text
from chatbot.store.chat import Post
from chatbot.store.health import StoreHealth

QUIET_S = 600.0

SendNow = Callable[[Post], Coroutine[Any, Any, None]]


class StoreHealthNotices:
    def __init__(
        self,
        send_now: SendNow,
        destinations: Sequence[Destination],
        locale: str = "en",
        *,
        quiet_s: float = QUIET_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.send_now = send_now
        self.destinations = list(destinations)
        self.locale = locale
        self.quiet_s = quiet_s
        self.clock = clock
        self._said_at: float | None = None
        self._trouble_said = False
        self._tasks: set[asyncio.Task[None]] = set()

    def attach(self, health: StoreHealth) -> None:
        health.listeners.append(self.changed)

    def changed(self, health: StoreHealth) -> None:
        """A store health listener: called when an episode begins or ends."""
        if health.problem is not None:
            now = self.clock()
            if self._said_at is not None and now - self._said_at < self.quiet_s:
                return
            self._said_at = now
            self._trouble_said = True
            self._post(text(self.locale, "store_unwritable", reason=health.problem))
            return
        if not self._trouble_said:
            return
        self._trouble_said = False
        since = self._said_at or self.clock()
        self._post(text(self.locale, "store_writable", duration=duration(self.clock() - since)))

    def _post(self, body: str) -> None:
        for where in self.destinations:
            post = Post(
                transport=where.transport,
                target=where.room,
                target_kind=where.kind,
                text=body,
                purpose="notice",
            )
            task = asyncio.get_running_loop().create_task(self.send_now(post))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
