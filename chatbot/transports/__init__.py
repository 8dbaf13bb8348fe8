"""Chat transports: XMPP, Matrix and the console, behind one small interface."""

from .base import (
    Identity,
    IncomingEdit,
    IncomingEvent,
    IncomingMessage,
    IncomingReaction,
    MemoryStateStore,
    NotConnected,
    ProbeReport,
    Room,
    RoomReport,
    StateStore,
    Target,
    TargetUnavailable,
    Transport,
    TransportError,
)
from .console import ConsoleSettings, ConsoleTransport
from .matrix import MatrixSettings, MatrixTransport
from .probe import probe_matrix, probe_xmpp
from .xmpp import XmppSettings, XmppTransport

__all__ = [
    "ConsoleSettings",
    "ConsoleTransport",
    "Identity",
    "IncomingEdit",
    "IncomingEvent",
    "IncomingMessage",
    "IncomingReaction",
    "MatrixSettings",
    "MatrixTransport",
    "MemoryStateStore",
    "NotConnected",
    "ProbeReport",
    "Room",
    "RoomReport",
    "StateStore",
    "Target",
    "TargetUnavailable",
    "Transport",
    "TransportError",
    "XmppSettings",
    "XmppTransport",
    "probe_matrix",
    "probe_xmpp",
]
