"""Matrix media on the wire: what an `m.image`/`m.file`/`m.audio`/`m.video` says, and
the content of one the bot sends.

Pure functions over event contents, like events.py. Everything an incoming content
says is the sender's claim: the name and type are for display, the size is a hint
that lets an oversized file be refused before a byte is fetched, and the mxc URI is
read with strict patterns because it becomes part of a request path. An attachment
that cannot be fetched (a malformed URI, keys that make no sense) still reaches the
chat as a file, whose fetch says why: the sender learns what went wrong instead of
meeting silence.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

#: The msgtypes that carry a file.
MSGTYPES = frozenset({"m.image", "m.file", "m.audio", "m.video"})
#: MSC3245: an audio message recorded as a voice note.
VOICE = "org.matrix.msc3245.voice"
#: Longest name, type and source kept from what a sender wrote.
MAX_NAME = 200
MAX_TYPE = 127
MAX_SOURCE = 300

# A server name is a host (an IPv4 address, a bracketed IPv6 address or a DNS name)
# and an optional port; a media id, as the spec recommends, letters, digits, _ and -.
_SERVER = r"(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,255})(?::[0-9]{1,5})?"
_MEDIA_ID = r"[A-Za-z0-9_-]{1,255}"
_MXC = re.compile(rf"mxc://(?P<server>{_SERVER})/(?P<media_id>{_MEDIA_ID})")
# RFC 6838 restricted names; parameters (";charset=...") are dropped.
_MIME = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,62}/[a-z0-9][a-z0-9!#$&^_.+-]{0,62}")
# JSON numbers past this are no longer exact in every client.
_MAX_SIZE = 2**53


@dataclass(frozen=True, slots=True)
class AttachmentKeys:
    """How an encrypted attachment is opened (the `file` object's key, iv and hash)."""

    key: str = field(repr=False)
    iv: str = field(repr=False)
    #: Base64 SHA-256 of the ciphertext, as the sender announced it.
    sha256: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaRef:
    """Where a file is and how to open it; what a fetch is bound to."""

    #: The mxc URI as sent (bounded), for logs and error lines.
    mxc: str
    server: str = ""
    media_id: str = ""
    declared_size: int | None = None
    keys: AttachmentKeys | None = None
    #: Why it cannot be fetched at all ("" when it can).
    problem: str = ""
    #: The problem is where the file points (the URI), not how it is encrypted.
    refused: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaContent:
    """What a media content says, read and bounded."""

    name: str
    #: MSC2530: the body when it is not the file's name ("" when none).
    caption: str
    declared_type: str
    declared_size: int | None
    voice: bool
    ref: MediaRef


def parse_mxc(uri: object) -> tuple[str, str] | None:
    """(server name, media id) of a well-formed mxc URI, else None."""
    if not isinstance(uri, str):
        return None
    match = _MXC.fullmatch(uri)
    return (match["server"], match["media_id"]) if match else None


def clean_name(value: str, limit: int = MAX_NAME) -> str:
    """A sender's name for display: no control or format characters (a right-to-left
    override could show "gpj.exe" as "exe.jpg"), trimmed, bounded."""
    kept = "".join(c for c in value if unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co"))
    return kept.strip()[:limit]


def mime_type(value: object) -> str:
    """A MIME type without parameters, lower case; "" for anything that is not one."""
    if not isinstance(value, str):
        return ""
    plain = value.split(";", 1)[0].strip().lower()[:MAX_TYPE]
    return plain if _MIME.fullmatch(plain) else ""


def _size(value: object) -> int | None:
    # bool is an int in Python, and no size at all.
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_SIZE:
        return value
    return None


def _keys(file: dict[str, Any]) -> AttachmentKeys | str:
    """The keys of an encrypted attachment (v2, AES-CTR), or why they cannot be used."""
    key = file.get("key")
    hashes = file.get("hashes")
    if file.get("v") != "v2":
        return "the file is encrypted in a version this bot does not read (not v2)"
    if not isinstance(key, dict) or not isinstance(key.get("k"), str):
        return "the file's encryption key is missing"
    if key.get("alg", "A256CTR") != "A256CTR" or key.get("kty", "oct") != "oct":
        return "the file is encrypted with an algorithm this bot does not read"
    if not isinstance(file.get("iv"), str):
        return "the file's encryption is incomplete (no iv)"
    if not isinstance(hashes, dict) or not isinstance(hashes.get("sha256"), str):
        return "the file's encryption is incomplete (no SHA-256 hash)"
    return AttachmentKeys(key=key["k"], iv=file["iv"], sha256=hashes["sha256"])


def _ref(content: dict[str, Any], declared_size: int | None) -> MediaRef | None:
    """Where the file is: `file` (encrypted) first, else `url`; None when neither."""
    file = content.get("file")
    file = file if isinstance(file, dict) else None
    uri = file.get("url") if file is not None else content.get("url")
    if uri is None:
        return None
    shown = clean_name(uri, MAX_SOURCE) if isinstance(uri, str) else ""
    where = parse_mxc(uri)
    if where is None:
        return MediaRef(
            mxc=shown,
            declared_size=declared_size,
            problem="the file's address is not an mxc://server/media-id this bot fetches",
            refused=True,
        )
    keys = _keys(file) if file is not None else None
    if isinstance(keys, str):
        return MediaRef(mxc=shown, declared_size=declared_size, problem=keys)
    server, media_id = where
    return MediaRef(
        mxc=shown, server=server, media_id=media_id, declared_size=declared_size, keys=keys
    )


def read_attachment(content: dict[str, Any]) -> MediaContent | None:
    """The file a media content carries; None when it names no file at all."""
    info = content.get("info")
    info = info if isinstance(info, dict) else {}
    size = _size(info.get("size"))
    ref = _ref(content, size)
    if ref is None:
        return None
    body = raw_body if isinstance(raw_body := content.get("body"), str) else ""
    raw_name = content.get("filename")
    filename = raw_name if isinstance(raw_name, str) and raw_name.strip() else ""
    # MSC2530: with a filename, a different body is a caption; without, body is the name.
    caption = body if filename and body != filename else ""
    declared_type = mime_type(info.get("mimetype"))
    if not declared_type and isinstance(content.get("file"), dict):
        declared_type = mime_type(content["file"].get("mimetype"))
    return MediaContent(
        name=clean_name(filename or body),
        caption=caption,
        declared_type=declared_type,
        declared_size=size,
        voice=VOICE in content or content.get("msgtype") == "m.audio",
        ref=ref,
    )


# -- out ----------------------------------------------------------------------------


def msgtype_for(content_type: str) -> str:
    """m.image, m.audio and m.video for those types, m.file for everything else."""
    kind = content_type.split("/", 1)[0].lower()
    return {"image": "m.image", "audio": "m.audio", "video": "m.video"}.get(kind, "m.file")


def file_content(
    *,
    name: str,
    content_type: str,
    size: int,
    url: str,
    keys: dict[str, Any] | None = None,
    caption: str = "",
    reply_to: str | None = None,
) -> dict[str, Any]:
    """The m.room.message for an uploaded file: `url` in a clear room, the `file` object
    (url, key, iv, hashes, v) in an encrypted one, where the url alone opens nothing.

    With a caption, `body` is the caption and `filename` the name (MSC2530); clients
    that do not know captions show the caption as the file's name, which still reads.
    """
    mimetype = mime_type(content_type) or "application/octet-stream"
    content: dict[str, Any] = {
        "msgtype": msgtype_for(mimetype),
        "body": caption or name,
        "filename": name,
        "info": {"mimetype": mimetype, "size": size},
        # Nobody's phone rings for a file, as for a notice.
        "m.mentions": {},
    }
    if keys is not None:
        content["file"] = {
            "url": url,
            "key": keys["key"],
            "iv": keys["iv"],
            "hashes": keys["hashes"],
            "v": keys.get("v", "v2"),
            "mimetype": mimetype,
        }
    else:
        content["url"] = url
    if reply_to:
        content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
    return content
