"""Whether the database takes writes now, and the wait until it does again.

A write can fail for a reason outside the bot: the disk holding the database is
full, the file system turned read-only, an I/O error, PostgreSQL out of space. The
transaction is rolled back whole, so nothing half-written remains; what the bot
must not do is treat it as a bug (a traceback per chat message, a card failed, a
crashed worker). The store marks its health on every write: the first failure
starts an *episode* (logged once), a probe write retries with back-off, and the
first write that succeeds again ends it (logged once). Everyone who needs to write
(the worker's results, the outbox's marks) waits on `writable()` meanwhile; the
chat refuses changes with the reason and keeps answering what it can read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

# The probe's back-off: the first retry after this many seconds, doubling up to the cap.
PROBE_FIRST_S = 1.0
PROBE_MAX_S = 30.0

Listener = Callable[["StoreHealth"], None]
Probe = Callable[[], Awaitable[None]]


class StoreHealth:
    def __init__(self, name: str, probe: Probe | None = None):
        self.name = name
        self._probe = probe
        #: Why writes fail now (in words, for people), or None while they work.
        self.problem: str | None = None
        #: When the current episode began (time.time()).
        self.since: float | None = None
        #: Writes refused in this episode, for the log line that ends it.
        self.refused = 0
        self.listeners: list[Listener] = []
        self._ok = asyncio.Event()
        self._ok.set()
        self._prober: asyncio.Task[None] | None = None
        self.probe_first_s = PROBE_FIRST_S
        self.probe_max_s = PROBE_MAX_S

    @property
    def writable(self) -> bool:
        return self.problem is None

    def failed(self, problem: str) -> None:
        """A write was refused for `problem`; the first refusal of an episode is logged."""
        self.refused += 1
        if self.problem is not None:
            self.problem = problem
            return
        self.problem = problem
        self.since = time.time()
        self._ok.clear()
        log.error(
            "database %s takes no writes: %s. Changes are refused and retried until it "
            "does again; reads go on",
            self.name,
            problem,
        )
        self._start_probing()
        self._tell()

    def worked(self) -> None:
        """A write went through: an episode, if one was on, is over."""
        if self.problem is None:
            return
        took = time.time() - (self.since or time.time())
        log.warning(
            "database %s takes writes again after %.0f s (%d writes were refused meanwhile)",
            self.name,
            took,
            self.refused,
        )
        self.problem = None
        self.since = None
        self.refused = 0
        self._ok.set()
        if self._prober is not None and self._prober is not asyncio.current_task():
            self._prober.cancel()
        self._prober = None
        self._tell()

    async def wait_writable(self) -> None:
        """Return once writes work again (at once while they do)."""
        await self._ok.wait()

    def _tell(self) -> None:
        for listener in self.listeners:
            try:
                listener(self)
            except Exception:  # noqa: BLE001 - a listener must not break the store
                log.exception("store health listener failed")

    def _start_probing(self) -> None:
        if self._probe is None or self._prober is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._prober = loop.create_task(self._probe_until_writable(), name="store-probe")

    async def _probe_until_writable(self) -> None:
        assert self._probe is not None
        delay = self.probe_first_s
        while self.problem is not None:
            await asyncio.sleep(delay)
            delay = min(self.probe_max_s, delay * 2)
            # The probe is a write like any other: success ends the episode (worked),
            # failure keeps it (failed); anything else is not ours to judge.
            with contextlib.suppress(Exception):
                await self._probe()

    async def close(self) -> None:
        if self._prober is not None:
            self._prober.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._prober
            self._prober = None
