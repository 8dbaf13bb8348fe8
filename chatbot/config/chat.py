"""[xmpp] and [matrix]: the chat networks the bot logs in to."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from chatbot.config.base import Section
from chatbot.config_file import HOMESERVER_PATTERN, MATRIX_ROOM_RE, describe_pattern
from chatbot.transports.networks import MATRIX, XMPP

# How an identity is written is the network's; how a wrong one is told, the file's.
XMPP_BARE_JID_RE = re.compile(
    describe_pattern(XMPP.identity_pattern, "a bare JID such as board@example.org")
)
MATRIX_USER_RE = re.compile(
    describe_pattern(MATRIX.identity_pattern, "a Matrix user id such as @board:example.org")
)

# A host name, an IPv4 address or a bracketed IPv6 address, then an optional port.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
UPLOAD_HOST_RE = re.compile(
    rf"(?:{_LABEL}(?:\.{_LABEL})*|\[[0-9A-Fa-f:.]{{2,45}}\])(?::(?P<port>[0-9]{{1,5}}))?"
)


class XmppSection(Section):
    # The bot's own account (a bare JID); owners talk to it directly or in its rooms.
    jid: str = Field(pattern=XMPP_BARE_JID_RE.pattern)
    # The file holding that account's password.
    password_file: Path
    # The server, when it is not found from the JID's domain (DNS SRV, else the domain).
    host: str | None = None
    # Its client port (with host).
    port: int = Field(default=5222, ge=1, le=65535)
    # Rooms (MUC) the bot joins; each must show occupants' real JIDs (non-anonymous).
    rooms: list[str] = []
    nick: str = Field(default="board", min_length=1, max_length=64)
    # "starttls" (default), "direct" (TLS from the first byte) or "none" (loopback only).
    tls: Literal["starttls", "direct", "none"] = "starttls"
    ca_certs: Path | None = None
    # Longer messages are cut to fit; a stanza over the server's limit costs the stream.
    max_stanza_bytes: int = Field(default=10_000, ge=2_000, le=10_000_000)
    # Hosts (host or host:port) whose file links the bot fetches; empty: any host of the
    # owners' and the bot's own domains, at a public address. A host listed here may be
    # at a private or loopback address too.
    upload_hosts: list[str] = []

    @field_validator("upload_hosts")
    @classmethod
    def _upload_hosts(cls, values: list[str]) -> list[str]:
        for value in values:
            match = UPLOAD_HOST_RE.fullmatch(value)
            if not match or not 0 < int(match["port"] or 1) < 65536:
                raise ValueError(
                    f"{value!r} is not a host or host:port (upload.example.org, "
                    "upload.example.org:5281, [2001:db8::1]:443)"
                )
        return values

    @field_validator("rooms")
    @classmethod
    def _rooms(cls, values: list[str]) -> list[str]:
        for value in values:
            if not XMPP_BARE_JID_RE.fullmatch(value):
                raise ValueError(f"{value!r} is not a room JID (room@conference.server)")
        return values


class MatrixSection(Section):
    # The homeserver's client address (https://matrix.example.org).
    homeserver: str = Field(pattern=HOMESERVER_PATTERN)
    # The bot's own account (@board:example.org).
    user_id: str = Field(pattern=MATRIX_USER_RE.pattern)
    # The account's password (the bot logs in once and keeps its device), or ...
    password_file: Path | None = None
    # ... an access token of an existing device: exactly one of the two.
    access_token_file: Path | None = None
    # The name the bot's device shows in clients' device lists.
    device_name: str = "intent-board"
    # Rooms the bot joins (#alias:server or !id:server); invites from owners join too.
    rooms: list[str] = []
    # End-to-end encryption keys (nio's crypto store); default: beside bot.database.
    crypto_store: Path | None = None
    # The passphrase nio pickles the crypto store's keys with; absent: nio's default.
    store_key_file: Path | None = None
    # "tofu": an owner's devices count as first seen; "verified": only devices
    # verified by SAS emoji verification or the owner's cross-signing.
    trust: Literal["tofu", "verified"] = "tofu"

    @field_validator("rooms")
    @classmethod
    def _rooms(cls, values: list[str]) -> list[str]:
        for value in values:
            if not MATRIX_ROOM_RE.fullmatch(value):
                raise ValueError(f"{value!r} is not a room alias or id (#room:server, !id:server)")
        return values

    @model_validator(mode="after")
    def _one_credential(self) -> MatrixSection:
        if (self.password_file is None) == (self.access_token_file is None):
            raise ValueError("give exactly one of password_file or access_token_file")
        return self
