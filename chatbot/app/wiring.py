"""From configuration to transports: settings, secrets read at start, room destinations.

The transports take their own settings types and know nothing of our config
file; this module is the one place that maps one onto the other.
"""

from __future__ import annotations

from pathlib import Path

from chatbot.config import Config
from chatbot.notify.notifier import Destination
from chatbot.secret_files import read_secret
from chatbot.transports.base import StateStore, Transport
from chatbot.transports.console import TRANSPORT as CONSOLE
from chatbot.transports.console import ConsoleSettings, ConsoleTransport
from chatbot.transports.matrix import MatrixSettings, MatrixTransport
from chatbot.transports.xmpp import XmppSettings, XmppTransport


def xmpp_settings(config: Config) -> XmppSettings | None:
    section = config.xmpp
    if section is None:
        return None
    return XmppSettings(
        jid=section.jid,
        password=read_secret(section.password_file),
        host=section.host,
        port=section.port,
        rooms=tuple(section.rooms),
        nick=section.nick,
        tls=section.tls,
        ca_certs=str(section.ca_certs) if section.ca_certs else None,
        max_stanza_bytes=section.max_stanza_bytes,
    )


def matrix_settings(config: Config) -> MatrixSettings | None:
    section = config.matrix
    if section is None:
        return None
    return MatrixSettings(
        homeserver=section.homeserver,
        user_id=section.user_id,
        password=read_secret(section.password_file) if section.password_file else None,
        access_token=read_secret(section.access_token_file) if section.access_token_file else None,
        rooms=tuple(section.rooms),
        owners=tuple(owner for owner in config.bot.owners if owner.startswith("@")),
        device_name=section.device_name,
        crypto_store=str(crypto_store(config)),
        trust=section.trust,
    )


def crypto_store(config: Config) -> Path:
    """The Matrix crypto store: as configured, else a folder beside the board's database."""
    assert config.matrix is not None
    return config.matrix.crypto_store or config.bot.database.parent / "matrix-crypto"


def build_transports(
    config: Config, state: StateStore, *, console_io: tuple | None = None
) -> dict[str, Transport]:
    transports: dict[str, Transport] = {}
    if (xmpp := xmpp_settings(config)) is not None:
        transports["xmpp"] = XmppTransport(xmpp, state)
    if (matrix := matrix_settings(config)) is not None:
        transports["matrix"] = MatrixTransport(matrix, state)
    if (owner := config.console_owner) is not None:
        settings = ConsoleSettings(owner=owner, bot_name="board")
        if console_io is None:
            transports[CONSOLE] = ConsoleTransport(settings, use_stdio=True)
        else:
            reader, writer = console_io
            transports[CONSOLE] = ConsoleTransport(settings, input=reader, output=writer)
    return transports


def destinations(config: Config) -> list[Destination]:
    """Every room the bot posts its notifications into."""
    found = []
    matrix_owners = tuple(o for o in config.bot.owners if o.startswith("@"))
    xmpp_owners = tuple(o for o in config.bot.owners if not o.startswith("@"))
    if config.xmpp:
        found += [Destination("xmpp", room, owners=xmpp_owners) for room in config.xmpp.rooms]
    if config.matrix:
        found += [Destination("matrix", room, owners=matrix_owners) for room in config.matrix.rooms]
    if (owner := config.console_owner) is not None:
        found.append(Destination(CONSOLE, owner, kind="person"))
    return found
