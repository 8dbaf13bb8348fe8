"""[web]: the live board's listener, its token and the limits that keep it harmless."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from chatbot.config.base import Section
from chatbot.config_file import LISTEN_PATTERN, KeyProblem, listen_problem


class WebSection(Section):
    # The live board (chatbot/web): where it listens, and the file holding its token.
    listen: str = Field(default="127.0.0.1:8080", pattern=LISTEN_PATTERN)
    token_file: Path
    # Connections at once; the board takes at most a quarter of the process's descriptors.
    max_connections: int = Field(default=256, ge=4, le=65536)
    # Peers whose X-Forwarded-Proto / Forwarded: proto=https count (a TLS proxy in front).
    trusted_proxies: list[str] = ["127.0.0.1/8", "::1"]
    # Where browsers reach the board (the TLS proxy's address): /web's sign-in links
    # start with it. Without it /web says which key to set.
    public_url: str | None = None

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        url = urlsplit(value)
        if url.scheme not in ("http", "https") or not url.hostname or url.query or url.fragment:
            raise KeyProblem(
                "web.public_url",
                f"{value!r} is not the board's address; write it like https://board.example.org/",
            )
        return value.rstrip("/") + "/"

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                ipaddress.ip_network(value, strict=False)
            except ValueError:
                raise KeyProblem(
                    "web.trusted_proxies",
                    f"{value!r} is not an IP address or network (like 10.0.0.5 or 10.0.0.0/8)",
                ) from None
        return values

    @field_validator("listen")
    @classmethod
    def _listen(cls, value: str) -> str:
        problem = listen_problem(value)
        if problem:
            raise KeyProblem("web.listen", problem)
        return value
