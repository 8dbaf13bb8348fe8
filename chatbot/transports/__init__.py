"""Chat transports behind one small interface: XMPP, Matrix and the console.

Each network lives in its own package (`xmpp/`, `matrix/`) or module (`console.py`)
and exports a `Network` record; `networks.NETWORKS` is the table of them. Nothing
here imports a network's library (slixmpp, nio): a network's builder does, for a
bot with a section for it.
"""

from .base import (
    Envelope,
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
from .network import Network, Rendering, Setup
from .networks import NETWORKS

__all__ = [
    "NETWORKS",
    "ConsoleSettings",
    "ConsoleTransport",
    "Envelope",
    "Identity",
    "IncomingEdit",
    "IncomingEvent",
    "IncomingMessage",
    "IncomingReaction",
    "MemoryStateStore",
    "Network",
    "NotConnected",
    "ProbeReport",
    "Rendering",
    "Room",
    "RoomReport",
    "Setup",
    "StateStore",
    "Target",
    "TargetUnavailable",
    "Transport",
    "TransportError",
]
