"""Send what the outbox holds, in order, once; wait out servers that are away.

A row is marked sent only when the server took it (the transport's `send`
returns the server's message id). Three kinds of trouble, three answers:

- the server is away (`NotConnected`): everything waits for the transport to
  come back;
- the room or person takes nothing now (`TargetUnavailable`: not joined yet, no
  voice): that place's rows wait in order, with a capped back-off, and are
  reported by `chatbot check`; other places go on;
- this one message failed (refused, unconfirmed, or the stream died under it):
  it is tried again after a back-off of its own while the rows behind it go on,
  and after MAX_TRIES it fails for good with the reason, so no single message
  can hold a room or make the bot reconnect over and over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from chatbot.board import Attachment, BoardError
from chatbot.store import Store, StoreError
from chatbot.store import chat as chat_store
from chatbot.store.chat import OutboxRow, Post
from chatbot.transports.base import (
    FilesNotSupported,
    Identity,
    NotConnected,
    Original,
    Outgoing,
    Room,
    Target,
    TargetUnavailable,
    Transport,
)
from chatbot.transports.files import OutgoingFile

log = logging.getLogger(__name__)


class FileReader(Protocol):
    """What the outbox reads of a file it sends (the board's kept files)."""

    async def attachment(self, attachment_id: int) -> Attachment | None: ...

    async def data(self, attachment_id: int) -> bytes: ...


#: Tries of one message before it is given up (each may have cost a reconnect).
MAX_TRIES = 5


def target_of(row: OutboxRow) -> Target:
    if row.target_kind == "person":
        return Identity(row.transport, row.room)
    return Room(row.transport, row.room)


def _retry_key(row: OutboxRow) -> tuple[str, str]:
    return (row.transport, row.txn_id)


def place(row: OutboxRow) -> str:
    """Where a row goes, for log lines: a room, or a direct chat with a person."""
    if row.target_kind == "person":
        return f"{row.transport} direct chat with {row.room}"
    return f"{row.transport} room {row.room}"


class OutboxSender:
    def __init__(
        self,
        store: Store,
        transports: dict[str, Transport],
        *,
        retry_initial: float = 1.0,
        retry_max: float = 60.0,
        max_tries: int = MAX_TRIES,
        files: FileReader | None = None,
    ):
        self.store = store
        self.transports = transports
        #: Where a row's file is read from (the board); None: files go as their text.
        self.files = files
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self.max_tries = max_tries
        self._wake = asyncio.Event()
        # (transport, room) -> (not before, current delay) for places that took nothing.
        self._held: dict[tuple[str, str], tuple[float, float]] = {}
        # (transport, txn_id) -> (not before, current delay) for messages that failed
        # themselves. Not the row id: a superseded edit's id can be the next row's.
        self._retry: dict[tuple[str, str], tuple[float, float]] = {}
        self.sent = 0
        self.failed = 0
        #: Told (transport, the id the post replies to) as each post is handed to its
        #: transport: the command latency metric ends there.
        self.handed: list[Callable[[str, str | None], None]] = []
        self._idle = asyncio.Event()
        self._idle.set()
        # Passes of `flush` so far, for `drained` to wait on the next one.
        self._passes = 0
        self._passed = asyncio.Condition()

    async def settled(self) -> None:
        """Return once no send is between the server's ack and our record of it."""
        await self._idle.wait()

    async def drained(self, transport: str) -> None:
        """Return once nothing for `transport` waits to be sent (the answers to what the
        owner typed before closing the console). Needs `run`; bound it with a timeout."""
        while True:
            passes = self._passes
            if not await chat_store.pending(self.store.reader, transport, limit=1):
                return
            self.wake()

            def passed(seen: int = passes) -> bool:
                return self._passes > seen

            async with self._passed:
                await self._passed.wait_for(passed)

    def wake(self, *_: object) -> None:
        self._wake.set()

    def _on_status(self, name: str, online: bool) -> None:
        if online:
            # Back, or a room joined at last: waiting places may take posts again.
            for key in [k for k in self._held if k[0] == name]:
                del self._held[key]
        self.wake()

    async def send_now(self, post: Post) -> None:
        """Send `post` at once, past the outbox: for an answer while the database takes
        no writes (it could not wait in the table). Not recorded, not retried: a
        server that is away loses it, and the log says so in one line."""
        transport = self.transports.get(post.transport)
        if transport is None or not transport.online:
            log.warning("could not send an answer to %s: its server is away", post.target)
            return
        target: Target = (
            Identity(post.transport, post.target)
            if post.target_kind == "person"
            else Room(post.transport, post.target)
        )
        try:
            await transport.send(
                Outgoing(target, post.text, reply_to=post.reply_to, html=post.html)
            )
        except Exception as error:  # noqa: BLE001 - nothing to retry it from; say it once
            log.warning("could not send an answer to %s: %s", post.target, error)
            return
        self._tell_handed(post.transport, post.reply_to)

    def _tell_handed(self, transport: str, reply_to: str | None) -> None:
        for hear in self.handed:
            try:
                hear(transport, reply_to)
            except Exception:  # noqa: BLE001 - a metric must not hold up the chat
                log.exception("outbox hand-off listener failed")

    async def run(self, stop: asyncio.Event) -> None:
        for transport in self.transports.values():
            transport.on_status(self._on_status)
        stopper = asyncio.ensure_future(stop.wait())
        pause = self.retry_initial
        try:
            while not stop.is_set():
                self._wake.clear()
                try:
                    next_retry = await self.flush()
                except StoreError as error:
                    # Rows cannot be marked (a full disk, the database away): send
                    # nothing that could not be recorded, and go on once writes work.
                    log.warning("outbox paused for up to %.0f s: %s", pause, error)
                    await self._wait_for_store(stopper, pause)
                    pause = min(self.retry_max, pause * 2)
                    continue
                except Exception:  # noqa: BLE001 - a bug here must not end the bot's chat
                    log.exception("outbox round failed; trying again in %.0f s", pause)
                    await self._wait_for_store(stopper, pause)
                    pause = min(self.retry_max, pause * 2)
                    continue
                pause = self.retry_initial
                async with self._passed:
                    self._passes += 1
                    self._passed.notify_all()
                timeout = None if next_retry is None else max(0.0, next_retry - time.monotonic())
                waiter = asyncio.ensure_future(self._wake.wait())
                await asyncio.wait(
                    {waiter, stopper}, timeout=timeout, return_when="FIRST_COMPLETED"
                )
                waiter.cancel()
        finally:
            stopper.cancel()

    async def _wait_for_store(self, stopper: asyncio.Future[Any], delay: float) -> None:
        """Until writes work again (the health's probe says so), or `delay` passed: a
        read that failed (the database away) leaves the health alone."""
        waits: set[asyncio.Future[Any]] = {stopper}
        if not self.store.health.writable:
            waits.add(asyncio.ensure_future(self.store.health.wait_writable()))
        await asyncio.wait(waits, timeout=delay, return_when="FIRST_COMPLETED")
        for waiter in waits - {stopper}:
            waiter.cancel()

    async def flush(self, batch: int = 200) -> float | None:
        """Send everything that can go now; returns when a waiting row may be retried."""
        for name, transport in self.transports.items():
            if not transport.online:
                continue
            rows = await chat_store.pending(self.store.reader, name, limit=batch)
            if len(rows) < batch:
                self._forget_retries(name, rows)
            blocked: set[str] = set()
            now = time.monotonic()
            for row in rows:
                if row.room in blocked:
                    continue  # keep a place's order: nothing overtakes a waiting row
                held = self._held.get((name, row.room))
                if held and held[0] > now:
                    blocked.add(row.room)
                    continue
                retry = self._retry.get(_retry_key(row))
                if retry and retry[0] > now:
                    continue  # this message waits alone; the ones behind it go on
                if not await self._send(transport, row):
                    blocked.add(row.room)
                if not transport.online:
                    break
                now = time.monotonic()
            if len(rows) == batch and not blocked:
                self._wake.set()  # more than one batch waited
        due = [not_before for not_before, _ in (*self._held.values(), *self._retry.values())]
        return min(due) if due else None

    def _forget_retries(self, transport: str, pending: list[OutboxRow]) -> None:
        """A row that waited for its next try and is pending no more (a newer edit
        superseded it) has no try left: kept, its past time would wake the loop at once,
        round after round."""
        live = {_retry_key(row) for row in pending}
        for key in [key for key in self._retry if key[0] == transport and key not in live]:
            del self._retry[key]

    async def _send(self, transport: Transport, row: OutboxRow) -> bool:
        """False when the row's place takes nothing now (its later rows must wait too)."""
        self._idle.clear()
        try:
            return await self._send_and_record(transport, row)
        finally:
            self._idle.set()

    async def _send_and_record(self, transport: Transport, row: OutboxRow) -> bool:
        replaces = None
        if row.replaces_id is not None:
            original = await chat_store.row(self.store.reader, row.replaces_id)
            if original is None or original.state == "failed":
                # Nothing to edit: the message never went out (its own failure said so).
                async with self.store.transaction() as db:
                    await chat_store.mark_failed(db, row, "the message it edits was not sent")
                return True
            if original.state != "sent" or original.message_id is None:
                return False  # the original goes first: it is earlier in the same place
            replaces = Original(original.message_id, original.txn_id)
        try:
            message_id = None
            if row.send_started_at is not None:
                # An earlier attempt may have reached the server before we could
                # record it (a crash, a lost connection, a stalled server): ask
                # before posting twice. Not knowing is a failed try, not a resend.
                message_id = await transport.find_sent(
                    target_of(row), row.txn_id, row.send_started_at
                )
                if message_id is not None:
                    log.info("outbox row %s was delivered before; not sending it again", row.id)
            if message_id is None:
                await chat_store.mark_send_started(self.store, row)
                if row.attachment_id is not None:
                    message_id = await self._send_with_file(transport, row)
                else:
                    message_id = await transport.send(
                        Outgoing(
                            target_of(row),
                            row.text,
                            reply_to=row.reply_to,
                            html=row.html,
                            txn_id=row.txn_id,
                            replaces=replaces,
                            mentions=tuple(row.mentions),
                        )
                    )
                self._tell_handed(row.transport, row.reply_to)
        except StoreError:
            # The database's failure, not this message's (the mark before the send could
            # not be written): nothing is sent that could not be recorded.
            raise
        except NotConnected:
            return False  # the status callback wakes us when it is back
        except TargetUnavailable as error:
            await self._hold(row, error)
            return False
        except Exception as error:  # noqa: BLE001 - this message failed; it alone waits
            await self._failed_try(row, error)
            return True
        # Its own rows only (the outbox row, the record of what was posted): no other
        # writer to wait for, nobody to wake (the next command may already be here).
        async with self.store.transaction(exclusive=False) as db:
            await chat_store.mark_sent(db, row, message_id)
        self._held.pop((row.transport, row.room), None)
        self._retry.pop(_retry_key(row), None)
        self.sent += 1
        return True

    async def _send_with_file(self, transport: Transport, row: OutboxRow) -> str:
        """A row with a file: the file with the text as its caption. A file that cannot go
        (no upload service, the quota dropped it) becomes the text and why, not a loss."""
        file = await self._file_of(row)
        if isinstance(file, OutgoingFile):
            try:
                return await transport.send(
                    Outgoing(
                        target_of(row),
                        row.text,
                        reply_to=row.reply_to,
                        txn_id=row.txn_id,
                        file=file,
                    )
                )
            except FilesNotSupported as error:
                why = str(error)
        else:
            why = file
        log.warning("outbox row %s goes without its file: %s", row.id, why)
        text = f"{row.text}\n(The file could not be sent: {why}.)"
        return await transport.send(
            Outgoing(target_of(row), text, reply_to=row.reply_to, txn_id=row.txn_id)
        )

    async def _file_of(self, row: OutboxRow) -> OutgoingFile | str:
        """The row's file ready to send, or why it cannot be."""
        assert row.attachment_id is not None
        if self.files is None:
            return "this bot sends no files"
        try:
            found = await self.files.attachment(row.attachment_id)
            data = await self.files.data(row.attachment_id)
        except BoardError as error:
            return str(error)
        if found is None:
            return "the file is gone"
        return OutgoingFile(found.name, found.content_type, data)

    async def _hold(self, row: OutboxRow, error: Exception) -> None:
        with contextlib.suppress(Exception):  # only the reason `chatbot check` shows
            async with self.store.transaction() as db:
                await chat_store.note_waiting(db, row, f"{type(error).__name__}: {error}")
        key = (row.transport, row.room)
        _, delay = self._held.get(key, (0.0, self.retry_initial / 2))
        delay = min(self.retry_max, delay * 2)
        self._held[key] = (time.monotonic() + delay, delay)
        log.warning(
            "cannot post to %s now (%s); its messages wait, next try in %.0fs",
            place(row),
            error,
            delay,
        )

    async def _failed_try(self, row: OutboxRow, error: Exception) -> None:
        reason = f"{type(error).__name__}: {error}"
        tries = row.attempts + 1
        with contextlib.suppress(Exception):
            async with self.store.transaction() as db:
                if tries >= self.max_tries:
                    await chat_store.mark_failed(db, row, reason)
                else:
                    await chat_store.mark_attempt_failed(db, row, reason)
        if tries >= self.max_tries:
            self._retry.pop(_retry_key(row), None)
            self.failed += 1
            log.error(
                "gave up on outbox row %s to %s after %d tries (%s); the messages after it went "
                "on, and /status shows where the board stands: %r",
                row.id,
                place(row),
                tries,
                reason,
                row.text[:200],
            )
            return
        _, delay = self._retry.get(_retry_key(row), (0.0, self.retry_initial / 2))
        delay = min(self.retry_max, delay * 2)
        self._retry[_retry_key(row)] = (time.monotonic() + delay, delay)
        log.warning(
            "cannot post to %s (%s); try %d of %d, next in %.0fs; the messages after it go on",
            place(row),
            reason,
            tries,
            self.max_tries,
            delay,
        )
