"""From configuration to transports: settings, secrets read at start, room destinations.

Each chat network's record (`transports/networks.py`) maps its own section onto its
transport's settings; this module hands it that section, the owners written for it
and a way to read secrets, and knows no network by name. A network's library is
imported only when its section is configured.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from chatbot.config import Config
from chatbot.notify.notifier import Destination
from chatbot.secret_files import read_secret
from chatbot.transports.base import StateStore, Transport
from chatbot.transports.console import TRANSPORT as CONSOLE
from chatbot.transports.console import ConsoleSettings, ConsoleTransport
from chatbot.transports.network import Network, Setup
from chatbot.transports.networks import NETWORKS


def owners_on(config: Config, network: Network) -> tuple[str, ...]:
    """The configured owners written as identities of `network`."""
    return tuple(owner for owner in config.bot.owners if network.claims(owner))


def servers(config: Config) -> list[tuple[Network, Any]]:
    """The chat networks the bot logs in to, each with its configuration section."""
    found = []
    for network in NETWORKS.values():
        # getattr: the section the network's record names (transports/networks.py), not a handler
        section = getattr(config, network.section, None)
        if network.build is not None and section is not None:
            found.append((network, section))
    return found


def state_dir(config: Config) -> Path:
    """The bot's own folder: beside the SQLite file; with PostgreSQL, beside this host's
    workspaces."""
    sqlite = config.bot.sqlite_file
    return sqlite.parent if sqlite is not None else config.bot.workspaces.parent


def transcriber(config: Config, *, secret: Callable[[Path], str] = read_secret) -> Any:
    """The voice notes' speech-to-text client, its key read; None without [transcription]."""
    from chatbot.chat.voice import Transcriber

    section = config.transcription
    if section is None:
        return None
    key = secret(section.api_key_file).strip() if section.api_key_file else None
    return Transcriber.from_section(section, key)


def settings_for(
    config: Config, network: Network, *, secret: Callable[[Path], str] = read_secret
) -> Any:
    """`network`'s transport settings from its section, secrets read; None without one.

    Backup and restore need only its folders: they pass a `secret` that reads nothing."""
    # getattr: the section the network's record names (transports/networks.py), not a handler
    section = getattr(config, network.section, None)
    if section is None or network.settings is None:
        return None
    setup = Setup(
        section=section,
        owners=owners_on(config, network),
        secret=secret,
        state_dir=state_dir(config),
    )
    return network.settings(setup)


def build_transports(
    config: Config, state: StateStore, *, console_io: tuple[TextIO, TextIO] | None = None
) -> dict[str, Transport]:
    transports: dict[str, Transport] = {}
    for network, _ in servers(config):
        assert network.build is not None
        transports[network.name] = network.build(settings_for(config, network), state)
    if (owner := config.console_owner) is not None:
        found = ConsoleSettings(
            owner=owner,
            bot_name="board",
            locale=config.bot.locale,
            files_dir=state_dir(config) / "sent-files",
        )
        if console_io is None:
            transports[CONSOLE] = ConsoleTransport(found, use_stdio=True)
        else:
            reader, writer = console_io
            transports[CONSOLE] = ConsoleTransport(found, input=reader, output=writer)
    return transports


def destinations(config: Config) -> list[Destination]:
    """Every room the bot posts its notifications into."""
    found = []
    for network, section in servers(config):
        owners = owners_on(config, network)
        found += [Destination(network.name, room, owners=owners) for room in section.rooms]
    if (owner := config.console_owner) is not None:
        found.append(Destination(CONSOLE, owner, kind="person"))
    return found
