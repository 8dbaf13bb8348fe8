"""Telling systemd the bot is ready (`Type=notify`), in a few lines and no dependency.

systemd passes a datagram socket in NOTIFY_SOCKET; "READY=1" on it ends the
unit's start-up. Without the variable (a terminal, a test) nothing is sent.
"""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger(__name__)


def notify(state: str) -> bool:
    """Send one sd_notify state ("READY=1\\nSTATUS=..."); False when nobody listens."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):  # an abstract socket
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(state.encode())
    except OSError as error:
        log.warning("could not tell systemd %r: %s", state.split("\n")[0], error)
        return False
    return True
