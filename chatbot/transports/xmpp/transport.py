"""XMPP transport (slixmpp): direct chats and MUC rooms.

Behaviour only: what a stanza means is decided in `stanzas` (and
`outgoing`), keeping the session alive in `connection`, being in the
rooms in `rooms`, reading archives in `archive`; files come in as links
(`oob`) fetched by `download` and go out through the server's upload
service (`upload`). Stanzas are parsed the moment they arrive (so the
room's occupant table is exactly as its presence left it) and then
handed, in order, to one pump task that drops duplicates and awaits the
handler.

After a fresh session (a restart, or a server that forgot the old one) the
archives are read from the last message handled, so what was sent while the
bot was away is handled once; live stanzas wait behind that catch-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections import Counter, OrderedDict
from dataclasses import replace
from typing import Any

import slixmpp
from slixmpp import JID
from slixmpp.plugins.xep_0198.stanza import RequestAck
from slixmpp.stanza import Message, Presence
from slixmpp.xmlstream.handler import Callback
from slixmpp.xmlstream.matcher import MatchXPath

from ..base import (
    EventHandler,
    IncomingEvent,
    IncomingMessage,
    IncomingReaction,
    NotConnected,
    Outgoing,
    OutgoingFile,
    Room,
    StateStore,
    Target,
    TargetUnavailable,
    Transport,
    TransportError,
)
from . import TRANSPORT, archive, download, oob
from . import outgoing as out
from . import stanzas as wire
from .connection import XmppConnection, XmppSettings, connect, handles, make_client
from .rooms import RoomKeeper
from .upload import Uploads

__all__ = ["XmppSettings", "XmppTransport", "connect", "make_client"]

log = logging.getLogger(__name__)


class XmppTransport(Transport):
    name = TRANSPORT
    sends_files = True

    def __init__(
        self, settings: XmppSettings, store: StateStore, *, handler: EventHandler | None = None
    ) -> None:
        super().__init__(handler=handler)
        self.settings = settings
        self.store = store
        self._conn: XmppConnection | None = None
        self._pump_task: asyncio.Task[None] | None = None
        self.rooms: dict[str, wire.RoomState] = {}
        #: Why stanzas were not delivered, for logs and tests.
        self.dropped: Counter[str] = Counter()
        self._own_jid = JID(settings.jid)
        self._queue: asyncio.Queue[wire.Parsed] = asyncio.Queue()
        self._echoes: dict[str, asyncio.Future[str | None]] = {}
        self._acks: dict[str, asyncio.Future[None]] = {}
        self._recent: OrderedDict[str, tuple[str, str, str]] = OrderedDict()
        self.archives = archive.Archives(
            lambda: self.client, self._own_jid.bare, settings.send_timeout
        )
        self.catch_up = archive.CatchUp(self.archives, store, self, self._queue)
        self.keeper = RoomKeeper(settings, lambda: self.client, self.rooms, self._joined_late)
        self.uploads = Uploads(lambda: self.client, timeout=settings.send_timeout)
        # Owners' clients upload to their own servers; the bot's own server is allowed too.
        self.upload_hosts = download.UploadHosts.build(
            settings.upload_hosts, (*settings.file_domains, self._own_jid.domain)
        )

    # -- StanzaContext for stanzas --------------------------------------

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
            on_fresh_session=self._fresh_session,
            on_online=self._set_online,
            on_session_end=self._on_session_end,
        )
        client = self._conn.client
        client.register_handler(
            Callback(
                "chatbot message", MatchXPath("{jabber:client}message"), handles(self._on_message)
            )
        )
        client.register_handler(
            Callback(
                "chatbot presence",
                MatchXPath("{jabber:client}presence"),
                handles(self._on_presence),
            )
        )
        client.add_event_handler("stanza_acked", self._on_acked)
        # Synchronous, before the new session's first stanza can be dispatched.
        client.add_event_handler(
            "session_start", lambda _: self.catch_up.hold("session", fresh=True)
        )
        self._pump_task = asyncio.create_task(self._pump(), name="xmpp-pump")
        self._conn.start()

    async def stop(self) -> None:
        await self.keeper.close()
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

    async def _fresh_session(self) -> None:
        """Catch up on our own archive, join the rooms, catch up on each room joined."""
        try:
            await self.catch_up.read(self._own_jid.bare)
            for room in await self.keeper.join_all():
                await self.catch_up.read(room)
        finally:
            self.catch_up.release("session")

    async def _joined_late(self, room: str) -> None:
        self.catch_up.hold(room)
        try:
            await self.catch_up.read(room)
        finally:
            self.catch_up.release(room)
        await self._tell_status()  # rows waiting for this room may go now

    # -- incoming ------------------------------------------------------------

    def _on_presence(self, pres: Presence) -> None:
        state = self.rooms.get(pres["from"].bare)
        nick = pres["from"].resource
        if state is None or not nick:
            return
        if pres["type"] == "unavailable":
            state.occupants.pop(nick, None)
        elif pres["type"] != "error":
            item = pres.xml.find(f"{{{wire.NS_MUC_USER}}}x/{{{wire.NS_MUC_USER}}}item")
            real = item.get("jid") if item is not None else None
            state.occupants[nick] = JID(real).bare if real else None
            codes = wire.room_status_codes(pres)
            if 110 in codes and not state.joined:
                # Our own join presence. Decide here, as the stanza arrives, whether the
                # room shows real JIDs: a message right behind it is parsed before the
                # joining coroutine resumes, and must already see the answer. Status 100
                # comes on entering only: our later presences (a nick taken back, another
                # session of our account leaving) lack it although nothing changed; a
                # change of the room's configuration comes as a message (172-174).
                state.non_anonymous = 100 in codes
        self.keeper.on_presence(pres)

    def _on_message(self, msg: Message) -> None:
        # Runs synchronously as the stanza arrives, so the occupant table is
        # exactly as the room's presence had made it at that moment.
        if self.archives.take(msg):
            self.dropped["archive"] += 1  # a result we asked for (or a stale one): not live
            return
        codes = wire.room_status_codes(msg) if msg["type"] == "groupchat" else set()
        state = self.rooms.get(msg["from"].bare)
        if state is not None and codes & {172, 173, 174}:
            state.non_anonymous = 172 in codes
        if msg["type"] == "error":
            # A bounce of something we sent (not in the room, no voice...):
            # its sender should hear now, not after send_timeout.
            self._bounced(msg)
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
                author = str(msg["from"]) if not ev.envelope.is_direct else ev.envelope.chat.id
                self._remember(ev.envelope.message_id, author, ev.envelope.sender_name, ev.text)
            self.catch_up.accept(result)

    def _bounced(self, msg: Message) -> None:
        for table in (self._echoes, self._acks):
            fut = table.get(msg["id"])
            if fut is not None and not fut.done():
                fut.set_exception(out.bounce_error(msg))

    def _remember(self, message_id: str, author: str, nick: str, text: str) -> None:
        """Recent messages, only to quote their start in a reply's fallback for old clients."""
        self._recent[message_id] = (author, nick, out.excerpt(text))
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
        ev = parsed.event
        counts = self._counts(ev.envelope.sender)
        state = self._state_for(self.store, ev.envelope.sender)
        if parsed.dedupe_key and not await state.mark_processed(self.name, parsed.dedupe_key):
            self.dropped["duplicate"] += 1
            return
        if isinstance(ev, wire.ReactionUpdate):
            key = f"xmpp:reactions:{ev.envelope.chat.id}:{ev.sender_key}:{ev.target_id}"
            before = frozenset(json.loads(await state.get_value(key) or "[]"))
            await state.set_value(key, json.dumps(sorted(ev.keys)))
            if ev.keys != before:
                await self._emit(
                    IncomingReaction(
                        envelope=ev.envelope,
                        target_id=ev.target_id,
                        added=ev.keys - before,
                        removed=before - ev.keys,
                    )
                )
        else:
            await self._emit(self._with_fetch(ev))
        await self.catch_up.mark(parsed, counts)

    def _with_fetch(self, ev: IncomingEvent) -> IncomingEvent:
        """Bind each file's fetch to the safe download (live and caught-up messages alike)."""
        if not isinstance(ev, IncomingMessage) or not ev.files:
            return ev
        return replace(ev, files=download.bind(ev.files, self.upload_hosts, self.settings.ca_certs))

    # -- outgoing ------------------------------------------------------------

    def _new_message(self, target: Target, message_id: str) -> tuple[Message, bool]:
        if not self.online or self.client is None:
            raise NotConnected("XMPP is not connected")
        in_room = isinstance(target, Room)
        if in_room:
            state = self.rooms.get(target.id)
            if state is None:
                raise TargetUnavailable(f"not in room {target.id}: it is not configured")
            if not state.joined:
                raise TargetUnavailable(f"not in room {target.id} yet (joining again)")
        msg = self.client.make_message(mto=JID(target.id), mtype="groupchat" if in_room else "chat")
        out.set_ids(msg, message_id)
        return msg, in_room

    async def _send_text(self, message: Outgoing) -> str:
        """Send text (or a correction of an earlier message of ours); in a room, return
        the stanza-id the room gave it. `mentions` (bare JIDs) are written as their
        nicks in the room; a direct chat notifies without one.

        html is ignored: XHTML-IM is obsolete and clients render plain text.
        Text is cut to the stanza limit: a stanza over the server's limit makes
        it close the stream, which would take every other message down too.
        """
        target, text, reply_to, replaces, mentions = (
            message.target,
            message.text,
            message.reply_to,
            message.replaces,
            message.mentions,
        )
        message_id = message.txn_id or uuid.uuid4().hex
        msg, in_room = self._new_message(target, message_id)
        msg["body"] = out.xml_safe(text)
        if replaces is not None:
            # A correction points at the original's own id, which we set to its txn_id.
            out.set_correction(msg, replaces.txn_id)
        elif reply_to:
            author, nick, quote = self._recent.get(reply_to, (None, None, None))
            out.add_reply(
                msg, reply_to, author=author, quote=quote, quoted_nick=nick if in_room else None
            )
        if mentions and in_room and replaces is None and not reply_to:
            # (A reply's quoted fallback counts body offsets too; nothing sends both.)
            occupants = self.rooms[target.id].occupants
            nicks = [nick for nick, real in occupants.items() if real in mentions]
            out.add_mentions(msg, target.id, nicks)
        if out.fit(msg, self.settings.max_stanza_bytes):
            log.warning("message %s cut to %d bytes", message_id, self.settings.max_stanza_bytes)
        server_id = await self._transmit(msg, message_id, in_room)
        self._remember_own(target, server_id, text)
        return server_id

    def _remember_own(self, target: Target, server_id: str, text: str) -> None:
        state = self.rooms.get(target.id) if isinstance(target, Room) else None
        author = f"{target.id}/{state.nick}" if state else self._own_jid.bare
        self._remember(server_id, author, state.nick if state else self.settings.nick, text)

    async def _send_file(self, message: Outgoing, file: OutgoingFile) -> str:
        """Upload to the server's service (XEP-0363) and send the link as the body with
        Out of Band Data, so clients show the file inline; a caption goes just before,
        as text. Returns the file message's id, as `send` does."""
        target, reply_to, txn_id = message.target, message.reply_to, message.txn_id
        message_id = txn_id or uuid.uuid4().hex
        msg, in_room = self._new_message(target, message_id)  # not connected: no upload
        url = out.xml_safe(await self.uploads.put(file))
        if message.text:
            caption_id = f"{txn_id}-caption" if txn_id else None
            await self._send_text(
                Outgoing(target, message.text, reply_to=reply_to, txn_id=caption_id)
            )
        author = self._recent.get(reply_to, (None, None, None))[0] if reply_to else None
        oob.file_message(msg, url, reply_to=reply_to, author=author)
        server_id = await self._transmit(msg, message_id, in_room)
        self._remember_own(target, server_id, url)
        return server_id

    async def react(self, target: Target, message_id: str, key: str) -> str | None:
        store_key = f"xmpp:own-reactions:{target.id}:{message_id}"
        keys = set(json.loads(await self.store.get_value(store_key) or "[]")) | {key}
        own_id = uuid.uuid4().hex
        msg, in_room = self._new_message(target, own_id)
        out.set_reactions(msg, message_id, keys)
        server_id = await self._transmit(msg, own_id, in_room)
        await self.store.set_value(store_key, json.dumps(sorted(keys)))
        return server_id

    async def find_sent(self, target: Target, txn_id: str, since: float) -> str | None:
        """Our message with this origin-id in the room's archive, or in our own for a person.

        Raises when the archive cannot be asked now (a stalled server): sending
        again without knowing is how a message arrived three times.
        """
        if self.client is None or not self.online:
            raise NotConnected("XMPP is not connected")
        own = self._own_jid.bare
        in_room = isinstance(target, Room)
        nick: str | None = None
        if in_room:
            state = self.rooms.get(target.id)
            if state is None or not state.joined:
                raise TargetUnavailable(f"not in room {target.id} yet")
            nick = state.nick
        try:
            found = await self.archives.find(
                target.id if in_room else own,
                lambda result: archive.sent_by_us(result, txn_id, own, nick),
                since=since,
                with_jid=None if in_room else target.id,
            )
        except archive.NoArchive:
            return None  # no archive to ask: sending again is all that is left
        if found is None:
            return None
        return archive.result_id(found)

    async def _transmit(self, msg: Message, message_id: str, in_room: bool) -> str:
        """Send and wait until the server has it: the room's echo, or a XEP-0198 ack."""
        assert self.client is not None
        loop = asyncio.get_running_loop()
        sm = self.client.plugin["xep_0198"]
        table: dict[str, asyncio.Future[Any]] = self._echoes if in_room else self._acks
        fut = table[message_id] = loop.create_future()
        try:
            self.client.send(msg)
            if not in_room:
                if not sm.enabled_out:
                    return message_id
                # Through the send queue, not sm.request_ack(): that writes <r/>
                # at once, ahead of the queued message it should cover.
                self.client.send(str(RequestAck(self.client)))
            result: str | None = await asyncio.wait_for(fut, self.settings.send_timeout)
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
