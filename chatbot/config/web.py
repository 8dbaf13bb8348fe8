"""[web]: the live board's listener, its token and the limits that keep it harmless."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, ValidationInfo, field_validator, model_validator

from chatbot.config.base import Section
from chatbot.config_file import LISTEN_PATTERN, KeyProblem, listen_problem


class WebSection(Section):
    # The live board (chatbot/web): where it listens, and the file holding its token.
    listen: str = Field(default="127.0.0.1:8080", pattern=LISTEN_PATTERN)
    # Required while the board is on (checked below, so the message can say why).
    token_file: Path | None = None
    # Connections at once; the board takes at most a quarter of the process's descriptors.
    max_connections: int = Field(default=256, ge=4, le=65536)
    # Peers whose X-Forwarded-Proto / Forwarded: proto=https count (a TLS proxy in front).
    trusted_proxies: list[str] = ["127.0.0.1/8", "::1"]
    # false: no board, only /metrics on metrics_listen (a host that only runs workers).
    board: bool = True
    # /metrics (chatbot/web/metrics*.py): its own Bearer token, besides the board's.
    metrics_token_file: Path | None = None
    # A listener of its own for /metrics, apart from the board's.
    metrics_listen: str | None = Field(default=None, pattern=LISTEN_PATTERN)
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

    @field_validator("listen", "metrics_listen")
    @classmethod
    def _listen(cls, value: str | None, info: ValidationInfo) -> str | None:
        problem = listen_problem(value) if value is not None else None
        if problem:
            raise KeyProblem(f"web.{info.field_name}", problem)
        return value

    @model_validator(mode="after")
    def _something_listens(self) -> WebSection:
        if self.board and self.token_file is None:
            raise KeyProblem(
                "web.token_file",
                "missing: the board needs its token file (or set board = false for "
                "/metrics on metrics_listen alone)",
            )
        if not self.board and self.metrics_listen is None:
            raise KeyProblem(
                "web.metrics_listen",
                "missing: with board = false nothing would listen; set metrics_listen = "
                '"127.0.0.1:9464", or remove [web]',
            )
        if not self.board and self.metrics_token_file is None and self.token_file is None:
            raise KeyProblem(
                "web.metrics_token_file",
                "missing: /metrics needs a token; name a file holding it (at least 16 characters)",
            )
        return self

    @property
    def metrics_tokens(self) -> dict[str, Path]:
        """The secret files whose token opens /metrics, by the key that names each."""
        found = {}
        if self.metrics_token_file is not None:
            found["web.metrics_token_file"] = self.metrics_token_file
        if self.token_file is not None:
            found["web.token_file"] = self.token_file
        return found
