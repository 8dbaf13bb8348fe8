"""Send what the outbox holds, in order, once; wait out servers that are away.

A row is marked sent only when the server took it (the transport's `send`
returns the server's message id). Rows for a room that refuses them wait with a
capped back-off and are reported in the log; other rooms go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from chatbot.store import Store
from chatbot.store import chat as chat_store
from chatbot.store.chat import OutboxRow
from chatbot.transports.base import Identity, NotConnected, Room, Target, Transport

log = logging.getLogger(__name__)


def target_of(row: OutboxRow) -> Target:
    if row.target_kind == "person":
        return Identity(row.transport, row.room)
    return Room(row.transport, row.room)


class OutboxSender:
    def __init__(
        self,
        store: Store,
        transports: dict[str, Transport],
        *,
        retry_initial: float = 1.0,
        retry_max: float = 60.0,
    ):
        self.store = store
        self.transports = transports
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self._wake = asyncio.Event()
        # (transport, room) -> (not before, current delay) for rooms that refused a post.
        self._held: dict[tuple[str, str], tuple[float, float]] = {}
        self.sent = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def settled(self) -> None:
        """Return once no send is between the server's ack and our record of it."""
        await self._idle.wait()

    def wake(self, *_: object) -> None:
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        for transport in self.transports.values():
            transport.on_status(self.wake)
        stopper = asyncio.ensure_future(stop.wait())
        try:
            while not stop.is_set():
                self._wake.clear()
                next_retry = await self.flush()
                timeout = None if next_retry is None else max(0.0, next_retry - time.monotonic())
                waiter = asyncio.ensure_future(self._wake.wait())
                await asyncio.wait(
                    {waiter, stopper}, timeout=timeout, return_when="FIRST_COMPLETED"
                )
                waiter.cancel()
        finally:
            stopper.cancel()

    async def flush(self, batch: int = 200) -> float | None:
        """Send everything that can go now; returns when a held room may be retried."""
        for name, transport in self.transports.items():
            if not transport.online:
                continue
            rows = await chat_store.pending(self.store.reader, name, limit=batch)
            blocked: set[str] = set()
            for row in rows:
                if row.room in blocked:
                    continue  # keep a room's order: nothing overtakes a waiting row
                held = self._held.get((name, row.room))
                if (held and held[0] > time.monotonic()) or not await self._send(transport, row):
                    blocked.add(row.room)
                if not transport.online:
                    break
            if len(rows) == batch and not blocked:
                self._wake.set()  # more than one batch waited
        due = [not_before for not_before, _ in self._held.values()]
        return min(due) if due else None

    async def _send(self, transport: Transport, row: OutboxRow) -> bool:
        self._idle.clear()
        try:
            return await self._send_and_record(transport, row)
        finally:
            self._idle.set()

    async def _send_and_record(self, transport: Transport, row: OutboxRow) -> bool:
        try:
            message_id = None
            if row.send_started_at is not None:
                # An earlier attempt may have reached the server before we could
                # record it (a crash, a lost connection): ask before posting twice.
                message_id = await transport.find_sent(
                    target_of(row), row.txn_id, row.send_started_at
                )
                if message_id is not None:
                    log.info("outbox row %s was delivered before; not sending it again", row.id)
            if message_id is None:
                await chat_store.mark_send_started(self.store, row.id)
                message_id = await transport.send(
                    target_of(row),
                    row.text,
                    reply_to=row.reply_to,
                    html=row.html,
                    txn_id=row.txn_id,
                )
        except NotConnected:
            return False  # the status callback wakes us when it is back
        except Exception as error:  # noqa: BLE001 - any refusal holds only this room
            self._hold(row, error)
            with contextlib.suppress(Exception):
                async with self.store.transaction() as db:
                    await chat_store.mark_attempt_failed(
                        db, row.id, f"{type(error).__name__}: {error}"
                    )
            return False
        async with self.store.transaction() as db:
            await chat_store.mark_sent(db, row, message_id)
        self._held.pop((row.transport, row.room), None)
        self.sent += 1
        return True

    def _hold(self, row: OutboxRow, error: Exception) -> None:
        key = (row.transport, row.room)
        _, delay = self._held.get(key, (0.0, self.retry_initial / 2))
        delay = min(self.retry_max, delay * 2)
        self._held[key] = (time.monotonic() + delay, delay)
        log.warning(
            "cannot post to %s room %s (%s: %s); %d-th try, next in %.0fs; rows wait",
            row.transport,
            row.room,
            type(error).__name__,
            error,
            row.attempts + 1,
            delay,
        )
