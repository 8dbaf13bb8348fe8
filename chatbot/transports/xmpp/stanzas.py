"""XMPP wire format: read incoming message stanzas.

Pure functions over slixmpp stanza objects (nothing here awaits a socket), so
every trust rule is unit-testable from XML text:

- a stanza-id (XEP-0359) counts only when `by` is the room it came from (or,
  in a direct chat, our own account's archive);
- in a room the sender is the occupant's real bare JID from the room's
  presence, and only in a room that shows real JIDs; never the nickname;
- delayed room history, forged or sent carbons and our own messages are
  dropped; corrections (XEP-0308) become IncomingEdit, never IncomingMessage;
- a message read back from an archive (XEP-0313) obeys the same rules, with
  the archive's own id as its stanza-id;
- a file link (XEP-0066, `oob`) becomes a file of the message, its link cut from
  the text; the transport binds its fetch.

Outgoing stanzas are filled in `outgoing`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol
from xml.etree import ElementTree as ET

from slixmpp import JID
from slixmpp.stanza import Message, Presence

from ..base import Envelope, Identity, IncomingEdit, IncomingMessage, Room
from ..events import Dropped
from . import TRANSPORT, oob

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "TRANSPORT",
    "Dropped",
]

NS_SID = "urn:xmpp:sid:0"
NS_DELAY = "urn:xmpp:delay"
NS_CARBONS = "urn:xmpp:carbons:2"
NS_FORWARD = "urn:xmpp:forward:0"
NS_REACTIONS = "urn:xmpp:reactions:0"
NS_REPLY = "urn:xmpp:reply:0"
NS_FALLBACK = "urn:xmpp:fallback:0"
NS_CORRECT = "urn:xmpp:message-correct:0"
NS_MUC_USER = "http://jabber.org/protocol/muc#user"
NS_MAM = "urn:xmpp:mam:2"


@dataclass
class RoomState:
    """What we know about a joined room, kept current from its presence."""

    nick: str
    #: Status 100 at join (or 172 later): the room shows everyone's real JID.
    non_anonymous: bool = False
    #: nick -> real bare JID (None when the room did not tell us).
    occupants: dict[str, str | None] = field(default_factory=dict)
    #: Our own join presence came back: we are in the room and may post.
    joined: bool = False


class StanzaContext(Protocol):
    @property
    def own_jid(self) -> JID: ...

    def room(self, room_jid: str) -> RoomState | None: ...


@dataclass(frozen=True, slots=True)
class OwnReflection:
    """A room echoing a message we sent: tells us the stanza-id it assigned."""

    room: str
    sent_id: str
    origin_id: str | None
    stanza_id: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReactionUpdate:
    """A sender's full reaction set on a target (XEP-0444 replaces, not adds).

    The transport turns it into added/removed keys against the set it saw last.
    """

    envelope: Envelope
    #: Who the set belongs to even when the real JID is hidden (for the diff only).
    sender_key: str
    target_id: str
    keys: frozenset[str]


@dataclass(frozen=True, slots=True)
class Parsed:
    event: IncomingMessage | IncomingEdit | ReactionUpdate
    #: Unique per transport; None when the stanza carries no usable id.
    dedupe_key: str | None
    #: (archive, id there): where a catch-up after a restart would find it again.
    archived: tuple[str, str] | None = None


Result = Parsed | Dropped | OwnReflection


def _find(msg: Message, ns: str, name: str) -> ET.Element | None:
    return msg.xml.find(f"{{{ns}}}{name}")


def trusted_stanza_id(msg: Message, by: str) -> str | None:
    """The XEP-0359 stanza-id that `by` assigned, ignoring any others a sender forged."""
    for el in msg.xml.findall(f"{{{NS_SID}}}stanza-id"):
        if el.get("by") == by and el.get("id"):
            return el.get("id")
    return None


def origin_id(msg: Message) -> str | None:
    el = _find(msg, NS_SID, "origin-id")
    return el.get("id") if el is not None else None


def strip_reply_fallback(msg: Message) -> str:
    """The body without the quote a XEP-0461 reply carries for old clients.

    The quote is the sender's claim about the target; the target id is what
    counts, so the quote is never part of the command text.
    """
    body: str = msg["body"]
    for fb in msg.xml.findall(f"{{{NS_FALLBACK}}}fallback"):
        if fb.get("for") != NS_REPLY:
            continue
        b = fb.find(f"{{{NS_FALLBACK}}}body")
        if b is None:
            return ""
        try:
            start, end = int(b.get("start", "0")), int(b.get("end", "0"))
        except ValueError:
            return body
        if 0 <= start < end <= len(body):
            return body[:start] + body[end:]
    return body


def reaction_keys(el: ET.Element) -> frozenset[str]:
    # Not Reactions.get_values(): with the `emoji` package installed it drops
    # anything it does not know unless all_chars=True; we keep every key.
    return frozenset(
        r.text.strip()
        for r in el.findall(f"{{{NS_REACTIONS}}}reaction")
        if r.text and r.text.strip()
    )


def message_of(xml: ET.Element) -> Message:
    """A message stanza around an element (a carbon's or an archive result's inner one)."""
    return Message(xml=xml)  # type: ignore[no-untyped-call]  # slixmpp's __init__ has no annotations


def room_status_codes(msg: Message | Presence) -> set[int]:
    codes = set()
    for x in msg.xml.findall(f"{{{NS_MUC_USER}}}x"):
        for st in x.findall(f"{{{NS_MUC_USER}}}status"):
            try:
                codes.add(int(st.get("code", "")))
            except ValueError:
                pass
    return codes


def parse_message(msg: Message, ctx: StanzaContext) -> Result:
    """Decide what one incoming message stanza means for the bot."""
    mtype = msg["type"]
    if mtype == "error":
        return Dropped("error")
    if mtype == "headline":
        # Announcements and PubSub notifications: never a command.
        return Dropped("headline")
    if _find(msg, NS_MAM, "result") is not None:
        # An archive search result we asked for (the outbox checks what was sent):
        # old messages, never commands.
        return Dropped("archive")
    own_bare = ctx.own_jid.bare
    frm: JID = msg["from"]

    received = _find(msg, NS_CARBONS, "received")
    sent = _find(msg, NS_CARBONS, "sent")
    if received is not None or sent is not None:
        # Only our own server may copy messages to us; anyone else is forging.
        if frm.bare != own_bare:
            return Dropped("forged-carbon")
        if sent is not None:
            return Dropped("own-carbon")
        assert received is not None  # one of the two is set and `sent` returned above
        inner = received.find(f"{{{NS_FORWARD}}}forwarded/{{jabber:client}}message")
        if inner is None:
            return Dropped("empty-carbon")
        return parse_direct(message_of(inner), ctx, carbon=True)

    if mtype == "groupchat":
        return parse_groupchat(msg, ctx)
    return parse_direct(msg, ctx, carbon=False)


def parse_groupchat(msg: Message, ctx: StanzaContext, *, at: float | None = None) -> Result:
    """A room message; `at` is set when it was read back from the room's archive."""
    frm: JID = msg["from"]
    room_jid = frm.bare
    state = ctx.room(room_jid)
    if state is None:
        return Dropped("unknown-room")
    nick = frm.resource
    if not nick:
        return Dropped("room-service")
    delayed = _find(msg, NS_DELAY, "delay") is not None
    stanza_id = trusted_stanza_id(msg, room_jid)
    archived_real = archived_sender(msg) if at is not None else None
    if nick == state.nick or archived_real == ctx.own_jid.bare:
        if delayed or at is not None:
            return Dropped("own-history")
        return OwnReflection(room_jid, msg["id"], origin_id(msg), stanza_id)
    if delayed:
        # History sent on join: already seen (or never meant) as a command.
        return Dropped("delayed")
    if at is None:
        real = state.occupants.get(nick) if state.non_anonymous else None
    else:
        # Who held the nick then, as the room recorded it; today's occupant of
        # that nick may be someone else.
        real = archived_real if state.non_anonymous else None
    sender = Identity(TRANSPORT, real) if real else None
    message_id = stanza_id or msg["id"] or origin_id(msg)
    if not message_id:
        return Dropped("no-id")
    dedupe = f"{room_jid}/{stanza_id}" if stanza_id else f"{room_jid}/{nick}/{message_id}"
    envelope = Envelope(
        chat=Room(TRANSPORT, room_jid),
        sender=sender,
        message_id=message_id,
        is_direct=False,
        sender_name=nick,
        at=at,
    )
    return _content(
        msg,
        envelope,
        dedupe,
        sender_key=real or f"nick:{nick}",
        archived=(room_jid, stanza_id) if stanza_id else None,
    )


def archived_sender(msg: Message) -> str | None:
    """The real bare JID a room recorded with an archived message, if it shows it.

    The room appends its own muc#user item after anything the sender put into
    the message, so only the last one is the room's word (a sender can add an
    item naming an owner; Prosody keeps it, in front of its own).
    """
    items = msg.xml.findall(f"{{{NS_MUC_USER}}}x/{{{NS_MUC_USER}}}item")
    real = items[-1].get("jid") if items else None
    return JID(real).bare if real else None


def parse_direct(
    msg: Message, ctx: StanzaContext, *, carbon: bool, at: float | None = None
) -> Result:
    frm: JID = msg["from"]
    own = ctx.own_jid
    if frm.bare == own.bare:
        return Dropped("own")
    if ctx.room(frm.bare) is not None:
        # A private message through a room comes from room@service/nick: the
        # bare part is the room, not a person, so it can never carry authority.
        return Dropped("muc-private")
    if not frm.bare or not frm.user:
        return Dropped("server")
    delay = _find(msg, NS_DELAY, "delay")
    if delay is not None and delay.get("from") not in (own.domain, own.bare):
        # Our server stamps what it held for us (offline storage: its domain;
        # a hibernating XEP-0198 session: our bare JID). Those were sent to us
        # while we were away and still count; any other delay is old history.
        return Dropped("delayed")
    if delay is not None and at is None:
        at = parse_stamp(delay.get("stamp"))
    sender = Identity(TRANSPORT, frm.bare)
    message_id = msg["id"] or origin_id(msg)
    if not message_id:
        return Dropped("no-id")
    archived = trusted_stanza_id(msg, own.bare)
    dedupe = f"{own.bare}/{archived}" if archived else f"{frm.bare}/{message_id}"
    envelope = Envelope(
        chat=sender,
        sender=sender,
        message_id=message_id,
        is_direct=True,
        sender_name=frm.bare,
        at=at,
    )
    return _content(
        msg,
        envelope,
        dedupe,
        sender_key=frm.bare,
        archived=(own.bare, archived) if archived else None,
    )


def copy_element(el: ET.Element) -> ET.Element:
    return ET.fromstring(ET.tostring(el))


def parse_stamp(stamp: str | None) -> float | None:
    """A XEP-0082 date-time as Unix time; None when absent or malformed."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _content(
    msg: Message,
    envelope: Envelope,
    dedupe: str,
    *,
    sender_key: str,
    archived: tuple[str, str] | None = None,
) -> Result:
    reactions = _find(msg, NS_REACTIONS, "reactions")
    if reactions is not None:
        target = reactions.get("id")
        if not target:
            return Dropped("reaction-without-target")
        return Parsed(
            ReactionUpdate(
                envelope=envelope,
                target_id=target,
                keys=reaction_keys(reactions),
                sender_key=sender_key,
            ),
            dedupe,
            archived,
        )
    replace = _find(msg, NS_CORRECT, "replace")
    if replace is not None:
        return Parsed(
            IncomingEdit(envelope=envelope, target_id=replace.get("id") or "", text=msg["body"]),
            dedupe,
            archived,
        )
    urls = oob.links(msg)
    if not msg["body"] and not urls:
        return Dropped("no-body")
    reply = _find(msg, NS_REPLY, "reply")
    reply_to = reply.get("id") if reply is not None else None
    text = strip_reply_fallback(msg) if reply is not None else msg["body"]
    # What the fallback cut (the quote of the target), when it is a cut from the front.
    quoted = msg["body"][: len(msg["body"]) - len(text)] if msg["body"].endswith(text) else ""
    return Parsed(
        IncomingMessage(
            envelope=envelope,
            # A file's link is not text: what is left of the body is its caption.
            text=oob.caption(text, urls),
            reply_to=reply_to or None,
            quoted=quoted,
            files=tuple(oob.incoming_file(url) for url in urls),
        ),
        dedupe,
        archived,
    )
