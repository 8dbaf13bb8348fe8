"""The chat networks the bot knows, by name: the one table everything else asks.

Adding a network is a package with its `Network` record and one line here.
"""

from __future__ import annotations

from .console import NETWORK as CONSOLE
from .events import Identity
from .matrix import NETWORK as MATRIX
from .network import Network
from .xmpp import NETWORK as XMPP

NETWORKS: dict[str, Network] = {network.name: network for network in (XMPP, MATRIX, CONSOLE)}


def claiming(value: str) -> Network | None:
    """The network a configured owner or requester is written for, if any."""
    return next((network for network in NETWORKS.values() if network.claims(value)), None)


def normal(identity: Identity) -> Identity:
    """The form identities are compared in (an unknown network's as they are)."""
    network = NETWORKS.get(identity.transport)
    return identity if network is None else network.identity(identity.id)


def formatted(transport: str) -> bool:
    """Whether posts to this network carry HTML beside the markdown text."""
    network = NETWORKS.get(transport)
    return network is not None and network.formatted


def sends_files(transport: str) -> bool:
    """Whether the bot can send a file to this network."""
    network = NETWORKS.get(transport)
    return network is not None and network.sends_files


def takes_files(transport: str) -> bool:
    """Whether people can send the bot a file on this network."""
    network = NETWORKS.get(transport)
    return network is not None and network.takes_files


def homes() -> dict[str, str]:
    """Each network's name and the module or package only where it may be written."""
    return {network.name: network.home for network in NETWORKS.values()}


__all__ = [
    "CONSOLE",
    "MATRIX",
    "NETWORKS",
    "XMPP",
    "Network",
    "claiming",
    "formatted",
    "normal",
    "sends_files",
    "takes_files",
]
