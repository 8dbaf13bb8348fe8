"""XMPP transport (slixmpp): direct chats and MUC rooms.

Behaviour only; what a stanza means is decided in `xmpp_stanzas`. The
connection is owned by one supervisor loop: connect, wait for a session (fresh
or XEP-0198-resumed), join every room on a fresh session, ping while up, and
after any loss wait a capped exponential back-off and connect again (slixmpp
itself does not reconnect after a lost stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Literal

import slixmpp
from slixmpp import JID
from slixmpp.plugins.xep_0198.stanza import RequestAck
from slixmpp.stanza import Message, Presence
from slixmpp.xmlstream.handler import Callback
from slixmpp.xmlstream.matcher import MatchXPath

from . import xmpp_stanzas as wire
from .base import (
    Backoff,
    EventHandler,
    IncomingReaction,
    NotConnected,
    Room,
    StateStore,
    Target,
    Transport,
    TransportError,
    redacting_repr,
)

log = logging.getLogger(__name__)

PLUGINS = ("xep_0030", "xep_0045", "xep_0198", "xep_0199", "xep_0203", "xep_0280",
           "xep_0308", "xep_0334", "xep_0359", "xep_0428", "xep_0444", "xep_0461")


@dataclass(frozen=True, repr=False)
class XmppSettings:
    jid: str
    password: str
    #: None: look the server up through DNS SRV for the JID's domain.
    host: str | None = None
    port: int = 5222
    rooms: tuple[str, ...] = ()
    nick: str = "bot"
    #: "none" only for a server on loopback (tests); the network is plain TCP then.
    tls: Literal["starttls", "direct", "none"] = "starttls"
    ca_certs: str | None = None
    reconnect_initial: float = 1.0
    reconnect_max: float = 60.0
    ping_interval: float = 60.0
    ping_timeout: float = 20.0
    #: How long send() waits for the server to confirm (room echo or SM ack).
    send_timeout: float = 10.0
    join_timeout: float = 20.0
    #: Room history stanzas requested on join; they are never commands anyway.
    join_history: int = 0

    def __repr__(self) -> str:
        return redacting_repr(self, ("password",))


def make_client(settings: XmppSettings, *, resource: str | None = None) -> slixmpp.ClientXMPP:
    jid = JID(settings.jid)
    if resource:
        jid.resource = resource
    client = slixmpp.ClientXMPP(jid, settings.password)
    for name in PLUGINS:
        client.register_plugin(name)
    client.enable_direct_tls = settings.tls == "direct"
    client.enable_starttls = settings.tls == "starttls"
    client.enable_plaintext = settings.tls == "none"
    if settings.tls == "none":
        client.plugin["feature_mechanisms"].unencrypted_scram = True
    if settings.ca_certs:
        client.ca_certs = settings.ca_certs
    return client


def connect(client: slixmpp.ClientXMPP, settings: XmppSettings) -> None:
    if settings.host:
        client.connect(settings.host, settings.port)
    else:
        client.connect()


class XmppTransport(Transport):
    name = "xmpp"

    def __init__(self, settings: XmppSettings, store: StateStore, *,
                 handler: EventHandler | None = None) -> None:
        super().__init__(handler=handler)
        self.settings = settings
        self.store = store
        self.client: slixmpp.ClientXMPP | None = None
        self.rooms: dict[str, wire.RoomState] = {}
        #: Why stanzas were not delivered, for logs and tests.
        self.dropped: Counter[str] = Counter()
        #: Fresh sessions so far (a resume does not count); tests wait on it.
        self.sessions = 0
        self.auth_failed = False
        self._own_jid = JID(settings.jid)
        self._queue: asyncio.Queue[wire.Parsed] = asyncio.Queue()
        self._tasks: list[asyncio.Task] = []
        self._stopping = asyncio.Event()
        self._session: asyncio.Future[str] | None = None
        self._lost: asyncio.Future[str] | None = None
        self._presence_echo: asyncio.Future[str] | None = None
        self._echoes: dict[str, asyncio.Future[str | None]] = {}
        self._acks: dict[str, asyncio.Future[None]] = {}
        self._recent: OrderedDict[str, tuple[str, str, str]] = OrderedDict()

    # -- StanzaContext for xmpp_stanzas ---------------------------------

    @property
    def own_jid(self) -> JID:
        return self._own_jid

    def room(self, room_jid: str) -> wire.RoomState | None:
        return self.rooms.get(room_jid)

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> None:
        """Begin connecting in the background; `wait_online()` says when it is up."""
        self._stopping.clear()
        self.client = client = make_client(self.settings)
        client.register_handler(Callback("chatbot message", MatchXPath("{jabber:client}message"),
                                         self._on_message))
        client.register_handler(Callback("chatbot presence",
                                         MatchXPath("{jabber:client}presence"), self._on_presence))
        client.add_event_handler("session_start", lambda _: self._settle(self._session, "fresh"))
        client.add_event_handler("session_resumed",
                                 lambda _: self._settle(self._session, "resumed"))
        client.add_event_handler("disconnected", lambda e: self._settle(self._lost, str(e)))
        client.add_event_handler("connection_failed", self._on_connection_failed)
        client.add_event_handler("failed_all_auth", self._on_auth_failed)
        client.add_event_handler("session_end", self._on_session_end)
        client.add_event_handler("stanza_acked", self._on_acked)
        self._tasks = [asyncio.create_task(self._supervise(), name="xmpp-supervisor"),
                       asyncio.create_task(self._pump(), name="xmpp-pump")]

    async def stop(self) -> None:
        self._stopping.set()
        client = self.client
        if client is not None:
            client.cancel_connection_attempt()
            if client.transport is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.disconnect(wait=1), 3)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        self._fail_pending("transport stopped")
        await self._set_online(False)

    @staticmethod
    def _settle(fut: asyncio.Future | None, value: str) -> None:
        if fut is not None and not fut.done():
            fut.set_result(value)

    def _on_connection_failed(self, error: object) -> None:
        # slixmpp would retry on its own schedule (up to 300 s apart); ours is capped.
        log.warning("XMPP connection to %s failed: %s", self.settings.host or "SRV", error)
        if self.client is not None:
            self.client.cancel_connection_attempt()
        self._settle(self._lost, f"connection failed: {error}")

    def _on_auth_failed(self, _: object) -> None:
        # The stream closes next, which settles the round through "disconnected".
        log.error("XMPP login as %s refused; check the password", self.settings.jid)
        self.auth_failed = True

    def _on_session_end(self, _: object) -> None:
        # The old stream is gone for good (resume refused): its unacked stanzas
        # will never be delivered, so their senders must hear about it.
        self._fail_pending("XMPP session ended before the server confirmed")

    async def _supervise(self) -> None:
        backoff = Backoff(self.settings.reconnect_initial, self.settings.reconnect_max)
        loop = asyncio.get_running_loop()
        while not self._stopping.is_set():
            self._session, self._lost = loop.create_future(), loop.create_future()
            assert self.client is not None
            connect(self.client, self.settings)
            await asyncio.wait([self._session, self._lost], return_when=asyncio.FIRST_COMPLETED)
            if self._session.done() and not self._lost.done():
                backoff.reset()
                kind = self._session.result()
                if kind == "fresh":
                    self.sessions += 1
                    await self._announce(self._lost)
                    joins = asyncio.ensure_future(self._join_rooms())
                    await asyncio.wait([joins, self._lost], return_when=asyncio.FIRST_COMPLETED)
                    joins.cancel()
                if not self._lost.done():
                    await self._set_online(True)
                    await self._keepalive(self._lost)
            reason = self._lost.result() if self._lost.done() else "?"
            await self._set_online(False)
            if self._stopping.is_set():
                break
            delay = backoff.next_delay()
            log.warning("XMPP connection lost (%s); reconnecting in %.2fs", reason, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)

    async def _announce(self, lost: asyncio.Future) -> None:
        """Send initial presence and wait until the server echoes it.

        Until the server has it, a message to our bare JID is not routed to
        this session (it could go to a stale one, or bounce); being "online"
        before that would lose the first direct message.
        """
        assert self.client is not None
        echo = self._presence_echo = asyncio.get_running_loop().create_future()
        self.client.send_presence()
        await asyncio.wait([echo, lost], timeout=self.settings.join_timeout,
                           return_when=asyncio.FIRST_COMPLETED)

    async def _keepalive(self, lost: asyncio.Future) -> None:
        """Ping the server while connected; a silent dead link becomes a lost one."""
        assert self.client is not None
        while not lost.done():
            done, _ = await asyncio.wait([lost], timeout=self.settings.ping_interval)
            if done:
                return
            try:
                await self.client.plugin["xep_0199"].ping(timeout=self.settings.ping_timeout)
            except Exception as exc:  # noqa: BLE001 - any failure means the link is gone
                log.warning("XMPP ping failed (%s); dropping the connection", exc)
                self.client.abort()
                self._settle(lost, "ping failed")

    async def _join_rooms(self) -> None:
        results = await asyncio.gather(*(self._join(r) for r in self.settings.rooms),
                                       return_exceptions=True)
        for room, result in zip(self.settings.rooms, results, strict=True):
            if isinstance(result, BaseException):
                log.error("could not join %s: %r", room, result)

    async def _join(self, room: str) -> wire.RoomState:
        assert self.client is not None
        # Known before the join presence goes out: occupant presences arrive first.
        state = self.rooms[room] = wire.RoomState(nick=self.settings.nick)
        pres, *_ = await self.client.plugin["xep_0045"].join_muc_wait(
            JID(room), self.settings.nick, maxstanzas=self.settings.join_history,
            timeout=self.settings.join_timeout)
        state.non_anonymous = 100 in wire.room_status_codes(pres)
        state.nick = pres["from"].resource or state.nick
        log.info("joined %s as %s (real JIDs %s)", room, state.nick,
                 "visible" if state.non_anonymous else "hidden")
        return state

    # -- incoming ------------------------------------------------------------

    def _on_presence(self, pres: Presence) -> None:
        if self.client is not None and pres["from"] == self.client.boundjid:
            self._settle(self._presence_echo, "seen")
            return
        state = self.rooms.get(pres["from"].bare)
        nick = pres["from"].resource
        if state is None or not nick:
            return
        if pres["type"] == "unavailable":
            state.occupants.pop(nick, None)
            return
        if pres["type"] == "error":
            return
        item = pres.xml.find(f"{{{wire.NS_MUC_USER}}}x/{{{wire.NS_MUC_USER}}}item")
        real = item.get("jid") if item is not None else None
        state.occupants[nick] = JID(real).bare if real else None

    def _on_message(self, msg: Message) -> None:
        # Runs synchronously as the stanza arrives, so the occupant table is
        # exactly as the room's presence had made it at that moment.
        codes = wire.room_status_codes(msg) if msg["type"] == "groupchat" else set()
        state = self.rooms.get(msg["from"].bare)
        if state is not None and codes & {172, 173, 174}:
            state.non_anonymous = 172 in codes
        result = wire.parse_message(msg, self)
        if isinstance(result, wire.Dropped):
            self.dropped[result.reason] += 1
            log.debug("dropped stanza %s: %s", msg["id"], result.reason)
        elif isinstance(result, wire.OwnReflection):
            for key in (result.sent_id, result.origin_id):
                fut = self._echoes.get(key or "")
                if fut is not None and not fut.done():
                    fut.set_result(result.stanza_id)
        else:
            ev = result.event
            if not isinstance(ev, wire.ReactionUpdate):
                author = str(msg["from"]) if not ev.is_direct else ev.chat.id
                self._remember(ev.message_id, author, ev.sender_name, ev.text)
            self._queue.put_nowait(result)

    def _remember(self, message_id: str, author: str, nick: str, text: str) -> None:
        """Recent texts, only to quote them in a reply's fallback for old clients."""
        self._recent[message_id] = (author, nick, text)
        while len(self._recent) > 500:
            self._recent.popitem(last=False)

    async def _pump(self) -> None:
        while True:
            parsed = await self._queue.get()
            try:
                await self._deliver(parsed)
            except Exception:
                log.exception("delivering %s failed", parsed.dedupe_key)

    async def _deliver(self, parsed: wire.Parsed) -> None:
        if parsed.dedupe_key and not await self.store.mark_processed(self.name, parsed.dedupe_key):
            self.dropped["duplicate"] += 1
            return
        ev = parsed.event
        if isinstance(ev, wire.ReactionUpdate):
            key = f"xmpp:reactions:{ev.chat.id}:{ev.sender_key}:{ev.target_id}"
            before = frozenset(json.loads(await self.store.get_value(key) or "[]"))
            await self.store.set_value(key, json.dumps(sorted(ev.keys)))
            if ev.keys == before:
                return
            await self._emit(IncomingReaction(
                transport=self.name, chat=ev.chat, sender=ev.sender, target_id=ev.target_id,
                added=ev.keys - before, removed=before - ev.keys, message_id=ev.message_id,
                is_direct=ev.is_direct, sender_name=ev.sender_name))
            return
        await self._emit(ev)

    # -- outgoing ------------------------------------------------------------

    def _new_message(self, target: Target, message_id: str) -> tuple[Message, bool]:
        if not self.online or self.client is None:
            raise NotConnected("XMPP is not connected")
        in_room = isinstance(target, Room)
        msg = self.client.make_message(mto=JID(target.id),
                                       mtype="groupchat" if in_room else "chat")
        wire.set_ids(msg, message_id)
        return msg, in_room

    async def send(self, target: Target, text: str, *, reply_to: str | None = None,
                   html: str | None = None, txn_id: str | None = None) -> str:
        """Send text; in a room, return the stanza-id the room gave it.

        html is ignored: XHTML-IM is obsolete and clients render plain text.
        """
        message_id = txn_id or uuid.uuid4().hex
        msg, in_room = self._new_message(target, message_id)
        msg["body"] = text
        if reply_to:
            author, nick, quote = self._recent.get(reply_to, (None, None, None))
            wire.add_reply(msg, reply_to, author=author, quote=quote,
                           quoted_nick=nick if in_room else None)
        server_id = await self._transmit(msg, message_id, in_room)
        state = self.rooms.get(target.id)
        author = f"{target.id}/{state.nick}" if in_room and state else self._own_jid.bare
        self._remember(server_id, author, self.settings.nick, text)
        return server_id

    async def react(self, target: Target, message_id: str, key: str) -> str | None:
        store_key = f"xmpp:own-reactions:{target.id}:{message_id}"
        keys = set(json.loads(await self.store.get_value(store_key) or "[]")) | {key}
        own_id = uuid.uuid4().hex
        msg, in_room = self._new_message(target, own_id)
        wire.set_reactions(msg, message_id, keys)
        server_id = await self._transmit(msg, own_id, in_room)
        await self.store.set_value(store_key, json.dumps(sorted(keys)))
        return server_id

    async def _transmit(self, msg: Message, message_id: str, in_room: bool) -> str:
        """Send and wait until the server has it: the room's echo, or a XEP-0198 ack."""
        assert self.client is not None
        loop = asyncio.get_running_loop()
        sm = self.client.plugin["xep_0198"]
        table: dict = self._echoes if in_room else self._acks
        fut = table[message_id] = loop.create_future()
        try:
            self.client.send(msg)
            if not in_room:
                if not sm.enabled_out:
                    return message_id
                # Through the send queue, not sm.request_ack(): that writes <r/>
                # at once, ahead of the queued message it should cover.
                self.client.send(str(RequestAck(self.client)))
            result = await asyncio.wait_for(fut, self.settings.send_timeout)
        except TimeoutError:
            raise TransportError(f"XMPP server did not confirm {message_id}") from None
        finally:
            table.pop(message_id, None)
        return result or message_id

    def _on_acked(self, stanza: object) -> None:
        if not isinstance(stanza, Message):
            return
        fut = self._acks.get(stanza["id"])
        if fut is not None and not fut.done():
            fut.set_result(None)

    def _fail_pending(self, why: str) -> None:
        for table in (self._echoes, self._acks):
            for fut in table.values():
                if not fut.done():
                    fut.set_exception(TransportError(why))



