"""The transport interface (the normalised events it emits are in events.py).

A transport carries text, replies and reactions in and out of one chat
network. It knows nothing of cards or the board: it turns wire events into the
small frozen types below, and it sends what it is told to send. Authority is
decided elsewhere by comparing `Identity` values; a transport's only job there
is to put a *real* identity into its events' `Envelope.sender`, or None when it
cannot know it.
"""

from __future__ import annotations

import asyncio
import logging
import random
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Protocol, runtime_checkable

# Part of the interface; kept in their own modules for size.
from .events import (  # noqa: F401
    Envelope,
    Identity,
    IncomingEdit,
    IncomingEvent,
    IncomingMessage,
    IncomingReaction,
    IncomingUnreadable,
    IncomingVerification,
    Room,
    SenderDevice,
    Target,
)
from .files import FileFetchError, IncomingFile, OutgoingFile  # noqa: F401
from .reports import ProbeReport, RoomReport  # noqa: F401

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "Envelope",
    "Identity",
    "IncomingEdit",
    "IncomingEvent",
    "IncomingMessage",
    "IncomingReaction",
    "IncomingUnreadable",
    "IncomingVerification",
    "OutgoingFile",
    "ProbeReport",
    "Room",
    "RoomReport",
    "SenderDevice",
    "Target",
]

log = logging.getLogger(__name__)


EventHandler = Callable[[IncomingEvent], Awaitable[None]]
StatusHandler = Callable[[str, bool], Awaitable[None] | None]
#: Whether a sender's events are worth remembering in the store (see `Transport.keep_state_for`).
SenderFilter = Callable[[Identity | None], bool]


@runtime_checkable
class StateStore(Protocol):
    """What a transport persists; the bot's SQLite store implements this."""

    async def get_value(self, key: str) -> str | None: ...

    async def set_value(self, key: str, value: str) -> None: ...

    async def mark_processed(self, transport: str, event_id: str) -> bool:
        """True the first time (transport, event_id) is seen, False after."""
        ...


class MemoryStateStore:
    """StateStore in memory, for unit tests, the console and senders who do not count.

    With a `limit`, the oldest entries are forgotten beyond that many, so a flood
    of made-up ids costs a fixed amount of memory.
    """

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.values: OrderedDict[str, str] = OrderedDict()
        self.processed: OrderedDict[tuple[str, str], None] = OrderedDict()

    async def get_value(self, key: str) -> str | None:
        return self.values.get(key)

    async def set_value(self, key: str, value: str) -> None:
        self.values[key] = value
        self.values.move_to_end(key)
        self._trim(self.values)

    async def mark_processed(self, transport: str, event_id: str) -> bool:
        item = (transport, event_id)
        if item in self.processed:
            return False
        self.processed[item] = None
        self._trim(self.processed)
        return True

    def _trim(self, table: OrderedDict[Any, Any]) -> None:
        while self.limit is not None and len(table) > self.limit:
            table.popitem(last=False)


class TransportError(Exception):
    """A send or react did not reach the server, or the server refused this message.

    The outbox retries such a message a few times and then gives it up, while
    other messages to the same place go on.
    """


@dataclass(frozen=True)
class Original:
    """A message of ours that an edit replaces: the server's id for it, and the id
    we sent it under (XMPP corrections point at that one, Matrix edits at the first)."""

    message_id: str
    txn_id: str


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One thing the bot sends: text, or a file with the text as its caption.

    reply_to: the server's id of the message this answers.
    html: the text formatted, where the network shows it (Matrix).
    txn_id: a stable id for this logical message; sending again with the same txn_id
    after a crash must not post twice where the network allows it (Matrix
    transaction ids, XMPP origin ids).
    replaces: send this as the new text of an earlier message of ours (XMPP message
    correction, Matrix m.replace); clients without edits show it as a new message.
    mentions: identities on this transport (a bare JID, a Matrix user id) whose phones
    should ring: each transport writes a mention its own way (the room nick, a user
    pill with m.mentions). Nothing else mentions anyone.
    file: sent instead of plain text (XMPP: the server's upload service and an Out of
    Band Data link; Matrix: the media repository, encrypted where the room is).
    """

    target: Target
    text: str
    reply_to: str | None = None
    html: str | None = None
    txn_id: str | None = None
    replaces: Original | None = None
    mentions: tuple[str, ...] = ()
    file: OutgoingFile | None = None


class NotConnected(TransportError):
    pass


class FilesNotSupported(TransportError):
    """This network (or its server) cannot take a file from the bot: no upload service."""


class TargetUnavailable(TransportError):
    """The room or person cannot take messages now (not joined, no voice, gone).

    No message is to blame: everything for that place waits, in order.
    """


def redacting_repr(obj: object, secret: tuple[str, ...]) -> str:
    """repr() of a settings dataclass with secret values replaced, for logs."""
    parts = []
    # Any settings dataclass instance; `fields` is typed for DataclassInstance only.
    for f in fields(obj):  # type: ignore[arg-type]
        # getattr: each field of the settings dataclass, by its name, for the log
        value = getattr(obj, f.name)
        shown = "'***'" if f.name in secret and value else repr(value)
        parts.append(f"{f.name}={shown}")
    return f"{type(obj).__name__}({', '.join(parts)})"


@dataclass
class Backoff:
    """Capped exponential back-off with jitter, reset after a good connection."""

    initial: float = 1.0
    cap: float = 60.0
    factor: float = 2.0
    jitter: float = 0.1
    attempt: int = field(default=0)

    def next_delay(self) -> float:
        delay = min(self.cap, self.initial * self.factor**self.attempt)
        self.attempt += 1
        return delay * (1 + random.uniform(-self.jitter, self.jitter))

    def reset(self) -> None:
        self.attempt = 0


class Transport(ABC):
    """Start, stop, send, react; incoming events go to one handler.

    The handler is awaited for each event in arrival order, so a slow handler
    delays the next event instead of racing it.
    """

    name: ClassVar[str]

    #: How many seen ids and values of senders who do not count are kept in memory.
    SCRATCH_LIMIT: ClassVar[int] = 10_000

    def __init__(self, *, handler: EventHandler | None = None) -> None:
        self._handler = handler
        self._status_handlers: list[StatusHandler] = []
        self._online = asyncio.Event()
        self._offline = asyncio.Event()
        self._offline.set()
        self._counts: SenderFilter = lambda _: True
        self._scratch = MemoryStateStore(limit=self.SCRATCH_LIMIT)

    def on_event(self, handler: EventHandler) -> None:
        self._handler = handler

    def keep_state_for(self, counts: SenderFilter) -> None:
        """Only senders for whom `counts` is true leave rows in the store.

        Seen ids and reaction sets of anyone else (strangers, hidden senders)
        live in a bounded memory: their events change nothing, so forgetting
        them at a restart costs at most a repeated refusal, and a flood of them
        cannot grow the database.
        """
        self._counts = counts

    def _state_for(self, store: StateStore, sender: Identity | None) -> StateStore:
        return store if self._counts(sender) else self._scratch

    def on_status(self, handler: StatusHandler) -> None:
        """Called with (transport name, online) when the connection comes or goes.

        The outbox uses it to flush what piled up while the server was away.
        """
        self._status_handlers.append(handler)

    @property
    def online(self) -> bool:
        return self._online.is_set()

    async def wait_online(self) -> None:
        await self._online.wait()

    async def wait_offline(self) -> None:
        await self._offline.wait()

    async def _set_online(self, online: bool) -> None:
        if online == self.online:
            return
        (self._online if online else self._offline).set()
        (self._offline if online else self._online).clear()
        log.info("%s transport %s", self.name, "online" if online else "offline")
        await self._tell_status()

    async def _tell_status(self) -> None:
        """Tell the status handlers again, e.g. when a room could be joined at last."""
        online = self.online
        for cb in self._status_handlers:
            try:
                result = cb(self.name, online)
                if asyncio.iscoroutine(result):
                    await result
            except Exception:
                log.exception("status handler failed")

    async def _emit(self, event: IncomingEvent) -> None:
        if self._handler is None:
            log.debug("no handler; dropping %r", event)
            return
        try:
            await self._handler(event)
        except Exception:
            # One broken command must not stop the transport.
            log.exception(
                "event handler failed on %s %s",
                type(event).__name__,
                event.envelope.message_id,
            )

    @abstractmethod
    async def start(self) -> None:
        """Connect (or begin connecting) and start delivering events."""

    @abstractmethod
    async def stop(self) -> None:
        """Disconnect and stop all background tasks."""

    async def send(self, message: Outgoing) -> str:
        """Send it and return the id the server knows the message by."""
        if message.file is None:
            return await self._send_text(message)
        if not self.sends_files:
            raise FilesNotSupported(f"{self.name} cannot send files")
        return await self._send_file(message, message.file)

    @abstractmethod
    async def _send_text(self, message: Outgoing) -> str:
        """The network's way to post text (or a correction of an earlier message)."""

    #: Whether a message with a file can go at all on this network (the console writes one).
    sends_files: ClassVar[bool] = False

    async def _send_file(self, message: Outgoing, file: OutgoingFile) -> str:
        """The network's way to post a file with the message's text as its caption."""
        raise FilesNotSupported(f"{self.name} cannot send files")

    @abstractmethod
    async def react(self, target: Target, message_id: str, key: str) -> str | None:
        """Add reaction `key` to message `message_id` in `target`."""

    async def find_sent(self, target: Target, txn_id: str, since: float) -> str | None:
        """The server's id of a message we sent with `txn_id` after `since`, if the
        server can tell (an archive); None when it was not sent or nobody knows.

        The outbox asks before sending a row again whose earlier attempt may have
        reached the server just before a crash."""
        return None
