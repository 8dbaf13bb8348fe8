"""What `chatbot check` found out per transport and room (each network's probe.py)."""

from __future__ import annotations

from dataclasses import dataclass


def yes_no(value: bool | None) -> str:
    """A fact of a room's line in `chatbot check`: a fault is written in capitals."""
    return "unknown" if value is None else ("yes" if value else "NO")


@dataclass(frozen=True, slots=True)
class RoomReport:
    """What `probe` found out about one configured room."""

    room: str
    joined: bool
    can_post: bool | None = None
    #: XMPP: the room shows occupants' real JIDs to us. Matrix: always True.
    sees_real_ids: bool | None = None
    detail: str = ""
    #: Matrix: the room is end-to-end encrypted (None: unknown, or not Matrix).
    encrypted: bool | None = None
    #: Matrix, encrypted rooms: the bot has working keys there (see `detail`).
    can_decrypt: bool | None = None


@dataclass(frozen=True, slots=True)
class ProbeReport:
    transport: str
    account: str
    connected: bool
    logged_in: bool
    rooms: tuple[RoomReport, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        # An encrypted room the bot cannot read is as broken as one it cannot post to.
        return self.logged_in and all(
            r.joined and r.can_post and r.can_decrypt is not False for r in self.rooms
        )
