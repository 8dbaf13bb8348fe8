"""The normalised events every transport emits, and who and where they come from.

A transport turns wire events into these small frozen types; who sent one, where
and when is its `Envelope`, the same record for every kind. Authority is decided
elsewhere by comparing `Identity` values; a transport's only job there is to put a
*real* identity into the envelope's `sender`, or None when it cannot know it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .files import IncomingFile


@dataclass(frozen=True, slots=True)
class Identity:
    """A person on one transport: a bare JID, a Matrix user id, the console owner.

    Never a nickname or display name; two identities are the same person only
    when both fields are equal.
    """

    transport: str
    id: str

    def __str__(self) -> str:
        return f"{self.transport}:{self.id}"


@dataclass(frozen=True, slots=True)
class Room:
    """A group chat: a MUC bare JID, a Matrix room id, the console."""

    transport: str
    id: str

    def __str__(self) -> str:
        return f"{self.transport}:{self.id}"


#: Where a message goes: a room, or a person (direct chat).
Target = Room | Identity


@dataclass(frozen=True, slots=True)
class SenderDevice:
    """What an end-to-end encrypted transport knows of the device an event came from.

    Authority still comes from `sender`; this only says whether the device may
    speak for that sender under the configured trust mode, and if not, why.
    """

    #: The device id ("" when the event named none, e.g. it came unencrypted).
    id: str
    trusted: bool
    #: Why not, when not: unverified, unknown, blocked, key_mismatch, forwarded, unencrypted.
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Dropped:
    """What a network's wire parser returns for a stanza or sync event that is no event
    for the bot (our own echo, a malformed one, one of a kind it ignores); `reason` is
    for logs, counters and tests."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Envelope:
    """Who sent an event, where, when, and under which id: what every kind of incoming
    event shares, built once per stanza or sync event by the transport."""

    #: Where an answer goes: the room, or the sender for a direct chat.
    chat: Target
    #: None when the sender's real identity is unknown (e.g. a room that hides JIDs).
    sender: Identity | None
    #: The event's own id on the wire, the one the server knows it by (a reply or a
    #: reaction names a message by it).
    message_id: str
    is_direct: bool = False
    #: Nick or display name, for display only; never compare it.
    sender_name: str = ""
    #: When the server took it (Unix time), set only for an event that reaches us
    #: late: caught up from an archive, held while we were away, a sync after a gap.
    at: float | None = None
    #: The sending device and whether it counts (Matrix E2EE); None where nothing says.
    device: SenderDevice | None = None

    @property
    def transport(self) -> str:
        """The network it came over: the chat's, for a room and a person alike."""
        return self.chat.transport


@dataclass(frozen=True, slots=True, kw_only=True)
class IncomingMessage:
    """A new text message (possibly a reply) that may carry a command."""

    envelope: Envelope
    text: str
    reply_to: str | None = None
    #: What a reply quotes of its target for clients without replies (the part cut
    #: from `text`): the sender's claim, used only to find lines in a message of ours.
    quoted: str = ""
    #: Files sent with (or as) this message, not fetched yet; `text` is then the
    #: caption, or "" (an XMPP link that is the whole body is cut from `text`).
    files: tuple[IncomingFile, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class IncomingReaction:
    """Reaction keys someone added to or removed from a message; the envelope's
    `message_id` is the reaction's own id on the wire (its stanza or event id)."""

    envelope: Envelope
    #: The message the reaction is on.
    target_id: str
    added: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class IncomingEdit:
    """A correction of an earlier message; its own type so that it can be refused."""

    envelope: Envelope
    target_id: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class IncomingUnreadable:
    """A message the transport could not read: encrypted, and its key has not come.

    Emitted once per missing key; the message itself is kept and delivered as an
    ordinary (late) event when the key arrives.
    """

    envelope: Envelope
    #: The unreadable message (answers point at it).
    target_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class IncomingVerification:
    """A device verification (Matrix SAS) the sender runs with the bot.

    `state` is "compare" (emoji to compare with the sender's client), "done"
    (the device is verified) or "cancelled".
    """

    envelope: Envelope
    device_id: str
    state: str
    emoji: tuple[str, ...] = ()
    #: Why a verification was cancelled (the protocol's reason), for "cancelled".
    detail: str = ""
    target_id: str = ""


IncomingEvent = (
    IncomingMessage | IncomingReaction | IncomingEdit | IncomingUnreadable | IncomingVerification
)
