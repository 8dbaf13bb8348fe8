"""XMPP files on the wire: Out of Band Data (XEP-0066) links, in and out.

Conversations, Gajim, Dino (and most clients since) send a file by uploading it to
their server's HTTP File Upload service (XEP-0363) and sending the link as the body
with a `jabber:x:oob` `<x><url>` beside it; a client shows the file inline only
when the body is exactly that link. A caption, where a client sends one, is the
rest of the body.

Pure functions over slixmpp stanzas, like `stanzas` and `outgoing`. Everything a
link says (its name, and the type guessed from it) is the sender's claim, for
display only; fetching is the transport's (`download`), bound later.
"""

from __future__ import annotations

import mimetypes
import unicodedata
from urllib.parse import unquote, urlsplit
from xml.etree import ElementTree as ET

from slixmpp.stanza import Message

from ..files import FileFetchError, IncomingFile

# The reply namespace, written here too: `stanzas` imports this module.
NS_REPLY = "urn:xmpp:reply:0"

NS_OOB = "jabber:x:oob"
#: More links than this in one message are not taken (a message is not an archive).
MAX_FILES = 10
#: Longest link and name kept from what a sender wrote.
MAX_URL = 2048
MAX_NAME = 200
# Voice notes as clients record them, where the system's table may not know them.
_AUDIO = {".m4a": "audio/mp4", ".opus": "audio/ogg", ".oga": "audio/ogg", ".ogg": "audio/ogg"}


def links(msg: Message) -> list[str]:
    """The OOB URLs a message carries, in order, bounded; blanks and over-long ones left out."""
    found = []
    for x in msg.xml.findall(f"{{{NS_OOB}}}x"):
        url = (x.findtext(f"{{{NS_OOB}}}url") or "").strip()
        if url and len(url) <= MAX_URL and url not in found:
            found.append(url)
    return found[:MAX_FILES]


def caption(text: str, urls: list[str]) -> str:
    """The body without the links it announces: "" when it was only the link
    (Conversations), else the rest, which is the caption."""
    for url in urls:
        text = text.replace(url, "")
    return text.strip()


def clean_name(value: str, limit: int = MAX_NAME) -> str:
    """A name for display: no control or format characters (a right-to-left override
    could show "gpj.exe" as "exe.jpg"), no path separators, trimmed, bounded."""
    kept = "".join(
        c
        for c in value
        if unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co") and c not in "/\\"
    )
    return kept.strip()[:limit]


def name_of(url: str) -> str:
    """The link's last path segment, unquoted and cleaned ("" when it has none)."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return ""
    return clean_name(unquote(path.rstrip("/").rsplit("/", 1)[-1]))


def type_of(name: str) -> str:
    """The MIME type the name suggests ("" when none): a hint, never trusted."""
    guessed = mimetypes.guess_type(name, strict=False)[0]
    if guessed:
        return guessed.lower()
    dot = name.rfind(".")
    return _AUDIO.get(name[dot:].lower(), "") if dot >= 0 else ""


async def _unbound(limit: int) -> bytes:
    # The transport binds every file to its download before the event leaves it.
    raise FileFetchError("this file's link was never bound to a download")


def incoming_file(url: str) -> IncomingFile:
    """What a link announces, with a fetch the transport replaces by its own."""
    name = name_of(url)
    declared = type_of(name)
    return IncomingFile(
        name=name,
        declared_type=declared,
        # Conversations' voice notes are audio files like any other (.m4a, .opus, .ogg).
        voice=declared.startswith("audio/"),
        source=url,
        fetch=_unbound,
    )


def file_message(
    msg: Message, url: str, *, reply_to: str | None = None, author: str | None = None
) -> None:
    """Make `msg` announce the file at `url`: the link as the whole body and as Out of
    Band Data, so clients show the file inline; a reply (XEP-0461) when asked, which
    quotes nothing (a quote in the body would stop clients showing the file)."""
    msg["body"] = url
    x = ET.SubElement(msg.xml, f"{{{NS_OOB}}}x")
    ET.SubElement(x, f"{{{NS_OOB}}}url").text = url
    if reply_to:
        el = ET.SubElement(msg.xml, f"{{{NS_REPLY}}}reply")
        el.set("id", reply_to)
        if author:
            el.set("to", author)
