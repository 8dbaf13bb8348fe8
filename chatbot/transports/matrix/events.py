"""Matrix wire format: read raw event dicts, build message contents.

Pure functions over the JSON the homeserver sent (`event.source` in nio), so
the trust rules are unit-testable without a server:

- the sender is `event["sender"]`, never a display name;
- a reply's target is `m.relates_to.m.in_reply_to.event_id`; the quoted
  fallback in the body is the sender's claim and is cut off, never parsed;
- an edit (`rel_type: m.replace`) is an IncomingEdit, never a command;
- only `m.text` counts as a message: notices are what bots (this one
  included) post, so answering them would let bots loop;
- `m.image`, `m.file`, `m.audio` and `m.video` are messages with a file (media.py
  reads them), its caption as the text; the file is fetched only when the chat
  side calls the fetch the transport bound to it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from ..base import Envelope, Identity, IncomingEdit, IncomingMessage, Room
from ..events import Dropped
from ..files import Fetch, FileFetchError, IncomingFile
from . import TRANSPORT, media

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "TRANSPORT",
    "Dropped",
]

HTML_FORMAT = "org.matrix.custom.html"
#: A whole event may be 65,536 bytes of JSON; the content leaves room for the rest.
MAX_CONTENT_BYTES = 60_000


@dataclass(frozen=True, slots=True, kw_only=True)
class ReactionAdded:
    room_id: str
    sender: str
    target_id: str
    key: str
    event_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Redaction:
    room_id: str
    sender: str
    redacts: str
    event_id: str


Result = IncomingMessage | IncomingEdit | ReactionAdded | Redaction | Dropped
#: Binds an incoming file's fetch to the transport's download.
Fetcher = Callable[[media.MediaRef], Fetch]


def unbound(_ref: media.MediaRef) -> Fetch:
    """Where nothing can download (a parse without a transport): the fetch says so."""

    async def fetch(_limit: int) -> bytes:
        raise FileFetchError("this file cannot be fetched here")

    return fetch


def relates_to(content: dict[str, Any]) -> dict[str, Any]:
    rel = content.get("m.relates_to")
    return rel if isinstance(rel, dict) else {}


def reply_target(content: dict[str, Any]) -> str | None:
    irt = relates_to(content).get("m.in_reply_to")
    if isinstance(irt, dict) and isinstance(event_id := irt.get("event_id"), str):
        return event_id
    return None


def strip_reply_fallback(body: str) -> str:
    """Drop the leading `> ` quote block a reply carries for old clients."""
    lines = body.split("\n")
    if not lines[0].startswith("> <"):
        # The spec's fallback begins "> <@sender:server>"; a quote of the sender's own
        # (lines of a /diff they comment on) is their words, kept.
        return body
    i = 0
    while i < len(lines) and lines[i].startswith(">"):
        i += 1
    if i == 0:
        return body
    if i < len(lines) and lines[i] == "":
        i += 1
    return "\n".join(lines[i:])


def is_own_join(source: dict[str, Any], own_user_id: str) -> bool:
    if source.get("type") != "m.room.member" or source.get("state_key") != own_user_id:
        return False
    content = source.get("content") or {}
    prev = (source.get("unsigned") or {}).get("prev_content") or {}
    return content.get("membership") == "join" and prev.get("membership") != "join"


def after_own_join(events: list[dict[str, Any]], own_user_id: str) -> list[dict[str, Any]]:
    """Only what happened after we (last) joined: a new room's backlog is not for us."""
    for i in range(len(events) - 1, -1, -1):
        if is_own_join(events[i], own_user_id):
            return events[i + 1 :]
    return events


def parse_event(
    source: dict[str, Any],
    *,
    room_id: str,
    own_user_id: str,
    is_direct: bool = False,
    encrypted: bool = False,
    fetcher: Fetcher = unbound,
) -> Result:
    """What one event means; `encrypted` when it reached us end-to-end encrypted."""
    etype = source.get("type")
    sender = source.get("sender")
    event_id = source.get("event_id")
    content = source.get("content")
    if (
        not isinstance(sender, str)
        or not isinstance(event_id, str)
        or not isinstance(content, dict)
    ):
        return Dropped("malformed")
    if sender == own_user_id:
        return Dropped("own")
    if etype == "m.reaction":
        rel = relates_to(content)
        if (
            rel.get("rel_type") != "m.annotation"
            or not isinstance(rel.get("event_id"), str)
            or not isinstance(rel.get("key"), str)
        ):
            return Dropped("reaction-malformed")
        return ReactionAdded(
            room_id=room_id,
            sender=sender,
            target_id=rel["event_id"],
            key=rel["key"],
            event_id=event_id,
        )
    if etype == "m.room.redaction":
        # Room v11 moved `redacts` into content; older rooms keep it at the top.
        redacts = content.get("redacts") or source.get("redacts")
        if not isinstance(redacts, str):
            return Dropped("redaction-malformed")
        return Redaction(room_id=room_id, sender=sender, redacts=redacts, event_id=event_id)
    if etype != "m.room.message":
        return Dropped(f"type:{etype}")
    if not content:
        return Dropped("redacted")
    envelope = Envelope(
        chat=Room(TRANSPORT, room_id),
        sender=Identity(TRANSPORT, sender),
        message_id=event_id,
        is_direct=is_direct,
        sender_name=sender,
    )
    rel = relates_to(content)
    if rel.get("rel_type") == "m.replace":
        new = content.get("m.new_content")
        text = new.get("body") if isinstance(new, dict) else None
        if not isinstance(text, str):
            text = str(content.get("body", ""))
        return IncomingEdit(envelope=envelope, target_id=str(rel.get("event_id", "")), text=text)
    if content.get("msgtype") in media.MSGTYPES:
        return _with_file(content, envelope, encrypted=encrypted, fetcher=fetcher)
    if content.get("msgtype") != "m.text":
        return Dropped(f"msgtype:{content.get('msgtype')}")
    body = content.get("body")
    if not isinstance(body, str) or not body.strip():
        return Dropped("no-body")
    target = reply_target(content)
    quoted = ""
    if target is not None and not rel.get("is_falling_back"):
        whole, body = body, strip_reply_fallback(body)
        quoted = whole[: len(whole) - len(body)]
    return IncomingMessage(envelope=envelope, text=body.strip(), reply_to=target, quoted=quoted)


def _with_file(
    content: dict[str, Any], envelope: Envelope, *, encrypted: bool, fetcher: Fetcher
) -> IncomingMessage | Dropped:
    """An m.image/m.file/m.audio/m.video: a message whose text is its caption (or "")."""
    attachment = media.read_attachment(content)
    if attachment is None:
        return Dropped("media-without-file")
    target = reply_target(content)
    caption = attachment.caption
    if target is not None and not relates_to(content).get("is_falling_back"):
        caption = strip_reply_fallback(caption)
    file = IncomingFile(
        name=attachment.name,
        declared_type=attachment.declared_type,
        declared_size=attachment.declared_size,
        voice=attachment.voice,
        source=attachment.ref.mxc,
        encrypted=encrypted,
        fetch=fetcher(attachment.ref),
    )
    return IncomingMessage(envelope=envelope, text=caption.strip(), reply_to=target, files=(file,))


def notice_content(
    text: str,
    html: str | None = None,
    *,
    reply_to: str | None = None,
    mentions: Sequence[str] = (),
) -> dict[str, Any]:
    """An m.notice: plain `body` for every client, HTML `formatted_body` where given.

    An empty m.mentions says "nobody": without it clients and servers guess from
    the body, and a report quoting a name would ring that person's phone.
    """
    content: dict[str, Any] = {"msgtype": "m.notice", "body": text, "m.mentions": {}}
    if mentions:
        # The default push rules silence every m.notice (.m.rule.suppress_notices comes
        # before .m.rule.is_user_mention), so a message that must ring is an m.text.
        content["msgtype"] = "m.text"
        content["m.mentions"] = {"user_ids": list(mentions)}
        content["body"] = f"{' '.join(mentions)}: {text}"
        pills = " ".join(
            f'<a href="https://matrix.to/#/{escape(user)}">{escape(user)}</a>' for user in mentions
        )
        html = f"<p>{pills}:</p>\n{html if html is not None else _plain_html(text)}"
    if html is not None:
        content["format"] = HTML_FORMAT
        content["formatted_body"] = html
    if reply_to:
        # No quoted fallback: the spec dropped it (v1.13) and clients fetch the target.
        content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
    return content


def _plain_html(text: str) -> str:
    return "<p>" + escape(text).replace("\n", "<br>\n") + "</p>"


def edit_content(original_event_id: str, text: str, html: str | None = None) -> dict[str, Any]:
    """An m.replace edit of our notice `original_event_id`: clients that know edits show
    `m.new_content` in its place, others the starred fallback body."""
    new = notice_content(text, html)
    content = {**notice_content(f"* {text}", f"* {html}" if html is not None else None)}
    content["m.new_content"] = new
    content["m.relates_to"] = {"rel_type": "m.replace", "event_id": original_event_id}
    return content


def content_bytes(content: dict[str, Any]) -> int:
    return len(json.dumps(content, ensure_ascii=False).encode())


def fit_content(content: dict[str, Any], max_bytes: int = MAX_CONTENT_BYTES) -> bool:
    """Cut a message content to `max_bytes` of JSON; True if it was cut.

    A homeserver refuses a larger event (M_TOO_LARGE) every time it is sent.
    The HTML goes first (it cannot be cut safely), then the end of the body.
    """
    if content_bytes(content) <= max_bytes:
        return False
    content.pop("format", None)
    content.pop("formatted_body", None)
    body = content["body"]
    low, high = 0, len(body)
    while low < high:  # the longest prefix that fits, with the mark
        mid = (low + high + 1) // 2
        content["body"] = body[:mid] + "…"
        if content_bytes(content) <= max_bytes:
            low = mid
        else:
            high = mid - 1
    content["body"] = body[:low] + "…"
    return True


def reaction_content(target_id: str, key: str) -> dict[str, Any]:
    return {"m.relates_to": {"rel_type": "m.annotation", "event_id": target_id, "key": key}}


def reaction_txn_id(room_id: str, target_id: str, key: str) -> str:
    """Same reaction, same transaction id: a retried react() is posted once."""
    digest = hashlib.sha256(f"{room_id}\0{target_id}\0{key}".encode()).hexdigest()[:32]
    return f"react-{digest}"
