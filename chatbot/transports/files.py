"""Files in and out of a chat network: what a transport hands over and what it is given.

A transport never downloads a file on its own: it turns an attachment on the wire
(an XMPP upload link announced with Out of Band Data, a Matrix `m.image`/`m.file`/
`m.audio`/`m.video`, encrypted or not) into an `IncomingFile` whose `fetch` it binds
to its own safe download. The chat side decides whether anyone fetches it (a
stranger's file is never fetched) and with which limit; the transport enforces the
limit while the bytes arrive, so an oversized file stops at the limit, not after.

Out, a transport sends an `OutgoingFile` through the network's own way (XMPP: its
server's upload service; Matrix: the media repository, encrypted in an encrypted
room) as the file of an `Outgoing` message (`Transport.send`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


class FileFetchError(Exception):
    """A file could not be fetched; `str(error)` says why in words fit for the chat."""


class FileTooLarge(FileFetchError):
    """The file is larger than the limit: said by its announced size or while it arrived."""

    def __init__(self, limit: int, seen: int | None = None) -> None:
        self.limit = limit
        self.seen = seen
        more = f" ({seen} bytes announced or read)" if seen is not None else ""
        super().__init__(f"the file is larger than the limit of {limit} bytes{more}")


class FileRefusedSource(FileFetchError):
    """The link points where the bot does not fetch from (another host, a private address)."""


#: Fetch the file's bytes, at most `limit` of them (else `FileTooLarge`); decrypted
#: where the network encrypted it. Raises `FileFetchError` with the reason.
Fetch = Callable[[int], Awaitable[bytes]]


@dataclass(frozen=True, slots=True, kw_only=True)
class IncomingFile:
    """A file someone sent, described by the sender and not fetched yet.

    Everything here except `fetch` is the sender's claim: the name and type are for
    display and as a hint only; the bot sniffs the type from the bytes.
    """

    #: The file's name as sent ("" when none); never used as a path.
    name: str
    #: The sender's MIME type ("" when none).
    declared_type: str = ""
    #: The sender's size in bytes, when announced.
    declared_size: int | None = None
    #: Sent as a voice note (Matrix `org.matrix.msc3245.voice`; XMPP: an audio file).
    voice: bool = False
    #: Where it lives on the network (an https URL, an mxc URI), for logs and errors.
    source: str = ""
    #: Sent in an end-to-end encrypted room: its clear bytes stay in the bot's state folder.
    encrypted: bool = False
    fetch: Fetch = field(repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class OutgoingFile:
    """A file the bot sends: a name fit for a download, its type, its bytes."""

    name: str
    content_type: str
    data: bytes = field(repr=False)
