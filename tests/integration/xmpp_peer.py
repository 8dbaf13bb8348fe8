"""A tiny real slixmpp client playing the owner (or a stranger) in tests."""

from __future__ import annotations

import asyncio
import io
import uuid
from collections.abc import Callable
from xml.etree import ElementTree as ET

import slixmpp
from slixmpp import JID
from slixmpp.stanza import Message
from slixmpp.xmlstream.handler import Callback
from slixmpp.xmlstream.matcher import MatchXPath

from chatbot.transports.xmpp import oob
from chatbot.transports.xmpp import outgoing as out
from chatbot.transports.xmpp import stanzas as wire
from chatbot.transports.xmpp.connection import shutdown
from tests.integration.waiting import first_matching

# A bound, not a delay: generous, so that a loaded box (two cores, other runs beside)
# does not fail a test whose message is merely late (issue 39).
TIMEOUT = 30


class XmppPeer:
    def __init__(self, jid: str, password: str, host: str, port: int) -> None:
        self.client = slixmpp.ClientXMPP(jid, password)
        for name in ("xep_0030", "xep_0045", "xep_0199", "xep_0203", "xep_0359", "xep_0363"):
            self.client.register_plugin(name)
        self.client.enable_direct_tls = False
        self.client.enable_starttls = False
        self.client.enable_plaintext = True
        self.client.plugin["feature_mechanisms"].unencrypted_scram = True
        self.host, self.port = host, port
        self.inbox: asyncio.Queue[Message] = asyncio.Queue()
        self.taken: list[str] = []
        self.nicks: dict[str, str] = {}
        self.client.register_handler(
            Callback("peer message", MatchXPath("{jabber:client}message"), self.inbox.put_nowait)
        )

    @property
    def jid(self) -> str:
        return self.client.boundjid.bare

    async def start(self) -> XmppPeer:
        started = asyncio.get_running_loop().create_future()
        self.client.add_event_handler(
            "session_start", lambda _: started.done() or started.set_result(True)
        )
        self.client.connect(self.host, self.port)
        await asyncio.wait_for(started, TIMEOUT)
        self.client.send_presence()
        return self

    async def stop(self) -> None:
        await shutdown(self.client)

    async def join(self, room: str, nick: str, *, history: int = 0) -> None:
        self.nicks[room] = nick
        await self.client.plugin["xep_0045"].join_muc_wait(
            JID(room), nick, maxstanzas=history, timeout=TIMEOUT
        )

    async def leave(self, room: str) -> None:
        """Leave and wait for the room to confirm (our own unavailable presence, status 110)."""
        nick = self.nicks.pop(room)
        gone = asyncio.get_running_loop().create_future()

        def on_presence(pres: object) -> None:
            codes = {
                int(st.get("code", "0"))
                for st in pres.xml.iter("{http://jabber.org/protocol/muc#user}status")
            }
            if (
                pres["from"].bare == room
                and pres["type"] == "unavailable"
                and 110 in codes
                and not gone.done()
            ):
                gone.set_result(True)

        name = f"leave {room} {uuid.uuid4().hex}"
        self.client.register_handler(
            Callback(name, MatchXPath("{jabber:client}presence"), on_presence)
        )
        try:
            self.client.send_presence(pshow="unavailable", pto=f"{room}/{nick}")
            await asyncio.wait_for(gone, TIMEOUT)
        finally:
            self.client.remove_handler(name)

    def build(self, to: str, text: str | None, *, room: bool) -> Message:
        msg = self.client.make_message(mto=JID(to), mtype="groupchat" if room else "chat")
        if text is not None:
            msg["body"] = text
        out.set_ids(msg, uuid.uuid4().hex)
        return msg

    async def transmit(self, msg: Message) -> str:
        """Send; in a room wait for the echo and return the room's stanza-id."""
        if msg["type"] != "groupchat":
            msg.send()
            return msg["id"]
        room, sent = msg["to"].bare, msg["id"]
        echo = await self.expect(lambda m: m["from"].bare == room and m["id"] == sent, send=msg)
        sid = wire.trusted_stanza_id(echo, room)
        assert sid, f"room gave no stanza-id: {echo}"
        return sid

    async def say(self, to: str, text: str, *, room: bool = False) -> str:
        return await self.transmit(self.build(to, text, room=room))

    async def reply(
        self,
        to: str,
        text: str,
        target: str,
        *,
        room: bool = False,
        quote: str = "something else entirely",
    ) -> str:
        msg = self.build(to, text, room=room)
        # A lying quote: the bot must go by the id, not by this text.
        out.add_reply(msg, target, quote=quote)
        return await self.transmit(msg)

    async def upload_and_send(
        self,
        to: str,
        data: bytes,
        name: str,
        content_type: str,
        *,
        room: bool = False,
        reply_to: str | None = None,
        caption: str = "",
    ) -> tuple[str, str]:
        """Send a file as Conversations does: upload it to the server's real upload
        service (XEP-0363), then the link as the body with Out of Band Data; as a reply
        (XEP-0461, with the quote fallback clients add) when asked, a caption before
        the link. Returns (the message's id, or the room's stanza-id; the link)."""
        url = await self.client.plugin["xep_0363"].upload_file(
            name,
            size=len(data),
            content_type=content_type,
            input_file=io.BytesIO(data),
            timeout=TIMEOUT,
        )
        msg = self.build(to, None, room=room)
        oob.file_message(msg, url)
        if caption:
            msg["body"] = f"{caption}\n{url}"
        if reply_to:
            out.add_reply(msg, reply_to, quote="the message this answers")
        return await self.transmit(msg), url

    async def react(self, to: str, target: str, keys: set[str], *, room: bool = False) -> str:
        msg = self.build(to, None, room=room)
        out.set_reactions(msg, target, keys)
        return await self.transmit(msg)

    async def correct(self, to: str, target: str, text: str, *, room: bool = False) -> str:
        msg = self.build(to, text, room=room)
        ET.SubElement(msg.xml, f"{{{wire.NS_CORRECT}}}replace").set("id", target)
        return await self.transmit(msg)

    async def expect(
        self,
        pred: Callable[[Message], bool],
        *,
        send: Message | None = None,
        within: float = TIMEOUT,
    ) -> Message:
        """The next received message matching pred (others are kept for later calls)."""
        if send is not None:
            send.send()
        return await first_matching(
            self.inbox,
            pred,
            within=within,
            who=str(self.client.boundjid),
            shown=lambda m: f"{m['from']} {m['type']} {m['body']!r:.80}",
            taken=self.taken,
        )

    async def expect_body(self, text: str, *, within: float = TIMEOUT) -> Message:
        return await self.expect(
            lambda m: m["body"] == text or m["body"].endswith("\n" + text), within=within
        )
