"""What the rest of the bot may know of a chat network: one `Network` record each.

errbot keeps one module per backend; here each network lives in a package of its
own (`xmpp/`, `matrix/`; the console in `console.py`) whose top exports its record:
how its identities are written and compared, whether it shows markdown as HTML,
how it is built from its configuration section and how `chatbot check` probes it.
Authority, wiring, check, config validation and the posts ask the record (through
`networks.py`) instead of comparing a network's name.

A record imports nothing of its network's libraries: its builders import them when
called, so a bot without an [xmpp] section never loads slixmpp, nor nio without
[matrix].
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from .base import StateStore, Transport
from .events import Identity
from .reports import ProbeReport, RoomReport


class Rendering(StrEnum):
    """How a network shows a post written in markdown."""

    #: The markdown text as written (XMPP, the console).
    PLAIN = "plain"
    #: The text and, beside it, the markdown rendered to HTML (Matrix).
    HTML = "html"


@dataclass(frozen=True)
class Setup:
    """What a network's builder is given: its own section and what it needs besides."""

    #: The network's configuration section ([xmpp], [matrix]), read by its keys.
    section: Any
    #: The configured owners written as identities of this network.
    owners: tuple[str, ...]
    #: Reads a secret file the section names (never logged).
    secret: Callable[[Path], str]
    #: The folder beside the board's SQLite file, for files of the network's own;
    #: None on PostgreSQL.
    state_dir: Path


@dataclass(frozen=True)
class Starter:
    """What `chatbot init --<network>` writes for this network (issue 34): a short
    configuration with only the keys a new user of it must fill in."""

    #: The network's name as people write it ("XMPP").
    title: str
    #: The placeholder owner, until `--owner` names the real one.
    owner_example: str
    #: Who may be an owner, in words for the file's comment.
    owners_words: str
    #: The network's section, as TOML text with placeholders `chatbot check` lists.
    section: str


def _as_is(value: str) -> str:
    return value


def _never(value: str) -> bool:
    return False


def _no_facts(room: RoomReport) -> str:
    return ""


def _no_syntax(locale: str) -> str:
    return ""


@dataclass(frozen=True)
class Network:
    #: The transport's name: `Identity.transport`, `Room.transport`, the outbox's rows.
    name: str
    #: The module or package the network lives in; only there is `name` written as text.
    home: str
    #: The key of its configuration section.
    section: str
    rendering: Rendering = Rendering.PLAIN
    #: The bot can send files there (an `Outgoing` with a file): a /diff's .patch, a log.
    sends_files: bool = False
    #: People can send the bot files there (the console cannot).
    takes_files: bool = False
    #: What one identity looks like (a regular expression), and that in words.
    identity_pattern: str = r"(?s).+"
    identity_words: str = "any text"
    #: Whether a configured owner or requester is written as this network's identity.
    claims: Callable[[str], bool] = _never
    #: The form identities are compared in.
    normalise: Callable[[str], str] = _as_is
    #: What `chatbot check` adds to a room's line (", sees real JIDs yes").
    room_facts: Callable[[RoomReport], str] = _no_facts
    #: The transport's own settings from its section (imports the network's library).
    settings: Callable[[Setup], Any] | None = None
    #: A transport from those settings and the bot's state store.
    build: Callable[[Any, StateStore], Transport] | None = None
    #: `chatbot check`: log in once and report per room (the store only where it helps).
    probe: Callable[[Any, StateStore | None], Awaitable[ProbeReport]] | None = None
    #: `chatbot check`, offline: the keys the network keeps on disk, from its settings, as
    #: (line, fine) pairs; a line not fine fails the check. None: it keeps none.
    keys_at_rest: Callable[[Any], list[tuple[str, bool]]] | None = None
    #: `chatbot init --<name>`'s short configuration; None: no such option.
    starter: Starter | None = None
    #: What /help adds for a person on this network, in a locale ("en", "de"): a syntax
    #: of its own to reply to or react on a message ("" where the client has buttons).
    syntax_help: Callable[[str], str] = _no_syntax

    @property
    def formatted(self) -> bool:
        return self.rendering is Rendering.HTML

    def identity_problem(self, value: str) -> str | None:
        """What is wrong with `value` as an identity of this network, or None."""
        return None if re.fullmatch(self.identity_pattern, value) else f"not {self.identity_words}"

    def identity(self, value: str) -> Identity:
        return Identity(self.name, self.normalise(value))
