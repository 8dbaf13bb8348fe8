"""XMPP transport (slixmpp): direct chats and MUC rooms.

Behaviour only: what a stanza means is decided in `xmpp_stanzas`, keeping the
session alive in `xmpp_connection`. Stanzas are parsed the moment they arrive
(so the room's occupant table is exactly as its presence left it) and then
handed, in order, to one pump task that drops duplicates and awaits the
handler.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections import Counter, OrderedDict
from datetime import UTC, datetime

import slixmpp
from slixmpp import JID
from slixmpp.exceptions import IqError, IqTimeout
from slixmpp.plugins.xep_0198.stanza import RequestAck
from slixmpp.stanza import Message, Presence
from slixmpp.xmlstream.handler import Callback
from slixmpp.xmlstream.matcher import MatchXPath

from . import xmpp_stanzas as wire
from .base import (
    EventHandler,
    IncomingReaction,
    NotConnected,
    Room,
    StateStore,
    Target,
    Transport,
    TransportError,
)
from .xmpp_connection import XmppConnection, XmppSettings, connect, make_client

__all__ = ["XmppSettings", "XmppTransport", "connect", "make_client"]

log = logging.getLogger(__name__)


class XmppTransport(Transport):
    name = "xmpp"

    def __init__(
        self, settings: XmppSettings, store: StateStore, *, handler: EventHandler | None = None
    ) -> None:
        super().__init__(handler=handler)
        self.settings = settings
        self.store = store
        self._conn: XmppConnection | None = None
        self._pump_task: asyncio.Task | None = None
        self.rooms: dict[str, wire.RoomState] = {}
        #: Why stanzas were not delivered, for logs and tests.
        self.dropped: Counter[str] = Counter()
        self._own_jid = JID(settings.jid)
        self._queue: asyncio.Queue[wire.Parsed] = asyncio.Queue()
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

    @property
    def client(self) -> slixmpp.ClientXMPP | None:
        return self._conn.client if self._conn else None

    @property
    def sessions(self) -> int:
        """Fresh sessions so far (a resume does not count); tests wait on it."""
        return self._conn.sessions if self._conn else 0

    async def start(self) -> None:
        """Begin connecting in the background; `wait_online()` says when it is up."""
        self._conn = XmppConnection(
            self.settings,
            on_fresh_session=self._join_rooms,
            on_online=self._set_online,
            on_session_end=self._on_session_end,
        )
        client = self._conn.client
        client.register_handler(
            Callback("chatbot message", MatchXPath("{jabber:client}message"), self._on_message)
        )
        client.register_handler(
            Callback("chatbot presence", MatchXPath("{jabber:client}presence"), self._on_presence)
        )
        client.add_event_handler("stanza_acked", self._on_acked)
        self._pump_task = asyncio.create_task(self._pump(), name="xmpp-pump")
        self._conn.start()

    async def stop(self) -> None:
        if self._conn is not None:
            await self._conn.stop()
        if self._pump_task is not None:
            self._pump_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump_task
            self._pump_task = None
        self._fail_pending("transport stopped")
        await self._set_online(False)

    def _on_session_end(self) -> None:
        # Stanzas the old stream never confirmed will not be delivered now.
        self._fail_pending("XMPP session ended before the server confirmed")

    async def _join_rooms(self) -> None:
        results = await asyncio.gather(
            *(self._join(r) for r in self.settings.rooms), return_exceptions=True
        )
        for room, result in zip(self.settings.rooms, results, strict=True):
            if isinstance(result, BaseException):
                log.error("could not join %s: %r", room, result)

    async def _join(self, room: str) -> wire.RoomState:
        assert self.client is not None
        # Known before the join presence goes out: occupant presences arrive first.
        state = self.rooms[room] = wire.RoomState(nick=self.settings.nick)
        pres, *_ = await self.client.plugin["xep_0045"].join_muc_wait(
            JID(room),
            self.settings.nick,
            maxstanzas=self.settings.join_history,
            timeout=self.settings.join_timeout,
        )
        state.non_anonymous = 100 in wire.room_status_codes(pres)
        state.nick = pres["from"].resource or state.nick
        log.info(
            "joined %s as %s (real JIDs %s)",
            room,
            state.nick,
            "visible" if state.non_anonymous else "hidden",
        )
        return state

    # -- incoming ------------------------------------------------------------

    def _on_presence(self, pres: Presence) -> None:
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
        codes = wire.room_status_codes(pres)
        if 110 in codes:
            # Our own join presence. Decide here, as the stanza arrives, whether the
            # room shows real JIDs: a message right behind it is parsed before the
            # joining coroutine resumes, and must already see the answer.
            state.non_anonymous = 100 in codes

    def _on_message(self, msg: Message) -> None:
        # Runs synchronously as the stanza arrives, so the occupant table is
        # exactly as the room's presence had made it at that moment.
        codes = wire.room_status_codes(msg) if msg["type"] == "groupchat" else set()
        state = self.rooms.get(msg["from"].bare)
        if state is not None and codes & {172, 173, 174}:
            state.non_anonymous = 172 in codes
        if msg["type"] == "error":
            # A bounce of something we sent (not in the room, no voice...):
            # its sender should hear now, not after send_timeout.
            for table in (self._echoes, self._acks):
                fut = table.get(msg["id"])
                if fut is not None and not fut.done():
                    condition = msg["error"]["condition"] or "error"
                    fut.set_exception(TransportError(f"XMPP refused {msg['id']}: {condition}"))
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
            await self._emit(
                IncomingReaction(
                    transport=self.name,
                    chat=ev.chat,
                    sender=ev.sender,
                    target_id=ev.target_id,
                    added=ev.keys - before,
                    removed=before - ev.keys,
                    message_id=ev.message_id,
                    is_direct=ev.is_direct,
                    sender_name=ev.sender_name,
                )
            )
            return
        await self._emit(ev)

    # -- outgoing ------------------------------------------------------------

    def _new_message(self, target: Target, message_id: str) -> tuple[Message, bool]:
        if not self.online or self.client is None:
            raise NotConnected("XMPP is not connected")
        in_room = isinstance(target, Room)
        if in_room and target.id not in self.rooms:
            raise TransportError(f"not in room {target.id} (not configured or join failed)")
        msg = self.client.make_message(mto=JID(target.id), mtype="groupchat" if in_room else "chat")
        wire.set_ids(msg, message_id)
        return msg, in_room

    async def send(
        self,
        target: Target,
        text: str,
        *,
        reply_to: str | None = None,
        html: str | None = None,
        txn_id: str | None = None,
    ) -> str:
        """Send text; in a room, return the stanza-id the room gave it.

        html is ignored: XHTML-IM is obsolete and clients render plain text.
        """
        message_id = txn_id or uuid.uuid4().hex
        msg, in_room = self._new_message(target, message_id)
        msg["body"] = text
        if reply_to:
            author, nick, quote = self._recent.get(reply_to, (None, None, None))
            wire.add_reply(
                msg, reply_to, author=author, quote=quote, quoted_nick=nick if in_room else None
            )
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

    async def find_sent(self, target: Target, txn_id: str, since: float) -> str | None:
        """Look in the room's archive (XEP-0313) for our message with this origin-id."""
        state = self.rooms.get(target.id)
        if self.client is None or state is None:
            return None  # a direct chat: our server keeps no archive we can ask
        start = datetime.fromtimestamp(since - 60, UTC)  # clocks of bot and server may differ
        try:
            async with asyncio.timeout(self.settings.send_timeout):
                async for found in self.client.plugin["xep_0313"].iterate(
                    jid=JID(target.id), start=start, rsm={"max": 50}
                ):
                    inner = found["mam_result"]["forwarded"]["stanza"]
                    if inner["from"].resource == state.nick and wire.origin_id(inner) == txn_id:
                        return found["mam_result"]["id"] or wire.trusted_stanza_id(inner, target.id)
        except (TimeoutError, IqError, IqTimeout) as error:
            log.warning("cannot search the archive of %s: %s", target.id, error)
        return None

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
