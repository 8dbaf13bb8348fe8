"""XMPP wire format, outgoing: ids, replies, reactions, and stanzas a server accepts.

Pure functions over slixmpp stanza objects. Outgoing text is made safe for XML
and cut to the server's stanza limit here, since one bad stanza makes the
server close the whole stream (and with it every other message in flight).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from xml.etree import ElementTree as ET

from slixmpp.stanza import Message

from ..base import TargetUnavailable, TransportError
from .stanzas import NS_CORRECT, NS_FALLBACK, NS_REACTIONS, NS_REPLY, NS_SID

NS_REFERENCE = "urn:xmpp:reference:0"

# A bounce with one of these says the room (or person) takes nothing now; any
# other condition is about the message itself.
PLACE_CONDITIONS = frozenset(
    {
        "forbidden",
        "not-acceptable",
        "item-not-found",
        "service-unavailable",
        "recipient-unavailable",
        "remote-server-not-found",
        "remote-server-timeout",
        "registration-required",
        "not-authorized",
        "gone",
        "redirect",
    }
)
#: A reply quotes at most this much of its target for clients without XEP-0461.
QUOTE_CHARS = 100
# Characters XML 1.0 cannot carry, not even escaped: one of them closes the stream.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def set_ids(msg: Message, message_id: str) -> None:
    """Same value as id and origin-id, so either kind of client can point at it."""
    msg["id"] = message_id
    el = ET.SubElement(msg.xml, f"{{{NS_SID}}}origin-id")
    el.set("id", message_id)


def set_correction(msg: Message, original_id: str) -> None:
    """XEP-0308: this message is the new text of our earlier one with that id; clients
    without corrections show it as a new message."""
    el = ET.SubElement(msg.xml, f"{{{NS_CORRECT}}}replace")
    el.set("id", original_id)


def add_mentions(msg: Message, room_jid: str, nicks: Iterable[str]) -> None:
    """Start the body with the occupants' nicks (what XMPP clients notify on) and mark
    each as a XEP-0372 mention of the occupant (not the real JID, which a
    semi-anonymous room keeps from the others)."""
    nicks = list(nicks)
    if not nicks:
        return
    at = 0
    for nick in nicks:
        el = ET.SubElement(msg.xml, f"{{{NS_REFERENCE}}}reference")
        el.set("type", "mention")
        el.set("uri", f"xmpp:{room_jid}/{nick}")
        el.set("begin", str(at))
        el.set("end", str(at + len(nick)))
        at += len(nick) + 2
    msg["body"] = ", ".join(nicks) + ": " + msg["body"]


def add_reply(
    msg: Message,
    reply_to: str,
    *,
    author: str | None = None,
    quote: str | None = None,
    quoted_nick: str | None = None,
) -> None:
    """XEP-0461 reply markup, plus a XEP-0428-marked quote for clients that show none."""
    el = ET.SubElement(msg.xml, f"{{{NS_REPLY}}}reply")
    el.set("id", reply_to)
    if author:
        el.set("to", author)
    quote = excerpt(quote or "")
    if not quote:
        return
    # One short line, whatever was quoted: the reply must not grow with its target
    # (a 200 KB message quoted whole made a reply the server closed the stream over).
    quoted = f"> {quote}\n"
    if quoted_nick:
        quoted = f"> {xml_safe(quoted_nick)}:\n" + quoted
    msg["body"] = quoted + msg["body"]
    fb = ET.SubElement(msg.xml, f"{{{NS_FALLBACK}}}fallback")
    fb.set("for", NS_REPLY)
    body = ET.SubElement(fb, f"{{{NS_FALLBACK}}}body")
    body.set("start", "0")
    body.set("end", str(len(quoted)))


def set_reactions(msg: Message, target_id: str, keys: Iterable[str]) -> None:
    """The full set of our reactions on target_id (XEP-0444 replaces the previous set)."""
    el = ET.SubElement(msg.xml, f"{{{NS_REACTIONS}}}reactions")
    el.set("id", target_id)
    for key in sorted(keys):
        ET.SubElement(el, f"{{{NS_REACTIONS}}}reaction").text = key
    # Ask archives to keep it (XEP-0334) so clients that come later see it.
    ET.SubElement(msg.xml, "{urn:xmpp:hints}store")


def excerpt(text: str, limit: int = QUOTE_CHARS) -> str:
    """The start of `text` as one short line, safe for XML, "…" where it was cut."""
    line = " ".join(xml_safe(text).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def xml_safe(text: str) -> str:
    """`text` without the characters XML 1.0 cannot carry (NUL, ESC, lone surrogates...)."""
    return _NOT_XML.sub("", text)


def stanza_bytes(msg: Message) -> int:
    return len(str(msg).encode())


def fit(msg: Message, max_bytes: int) -> bool:
    """Cut the body so that the whole stanza is at most `max_bytes`; True if it was cut.

    The cut is measured on the serialised stanza (escaping makes `<` four bytes,
    UTF-8 makes an emoji four), and the body keeps its start, which carries any
    reply quote the fallback markup points into.
    """
    if stanza_bytes(msg) <= max_bytes:
        return False
    body = msg["body"]
    low, high = 0, len(body)
    while low < high:  # the longest prefix that fits, with the mark
        mid = (low + high + 1) // 2
        msg["body"] = body[:mid] + "…"
        if stanza_bytes(msg) <= max_bytes:
            low = mid
        else:
            high = mid - 1
    msg["body"] = body[:low] + "…"
    return True


def bounce_error(msg: Message) -> TransportError:
    """What a bounce (an error message answering ours) says to whoever sent it."""
    condition = msg["error"]["condition"] or "error"
    kind = TargetUnavailable if condition in PLACE_CONDITIONS else TransportError
    return kind(f"XMPP refused {msg['id']}: {condition}")
