"""The web board's settings from the configuration, and what `chatbot check` says of them."""

from __future__ import annotations

import ipaddress
import resource
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from chatbot.board.hand_over import RuntimeSettings
from chatbot.config import Config
from chatbot.secret_files import read_secret

DEFAULT_MAX_CONNECTIONS = 256
TRUSTED_PROXIES = ("127.0.0.1/8", "::1")
# A connection must have sent its whole request head this soon after it opened (or after
# its last answer, kept alive): a slow client cannot hold a descriptor for long.
HEADER_TIMEOUT_S = 10.0
# The board shares the bot's descriptors (intent files, the database, the agents' pipes):
# it takes at most this share of the process's soft limit.
SHARE_OF_DESCRIPTORS = 4
# Connections accepted in one go before the cap is looked at again: each is a descriptor.
MAX_ACCEPT_BATCH = 128


@dataclass(frozen=True)
class Caps:
    """How many connections the board holds at once, and how many of them may be streams."""

    connections: int
    streams: int
    accept_batch: int  # connections asyncio accepts in one go
    soft_limit: int | None  # the process's RLIMIT_NOFILE soft limit; None: unlimited
    lowered: bool  # the descriptor limit, not [web] max_connections, set the cap


def descriptor_limit() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def caps(max_connections: int, soft_limit: int | None) -> Caps:
    share = max_connections if soft_limit is None else soft_limit // SHARE_OF_DESCRIPTORS
    lowered = share < max_connections
    connections = max(2, min(share, max_connections))
    # Live pages hold their connection for good; the other half stays for page loads.
    return Caps(
        connections=connections,
        streams=max(1, connections // 2),
        accept_batch=max(1, min(MAX_ACCEPT_BATCH, connections // 4)),
        soft_limit=soft_limit,
        lowered=lowered,
    )


@dataclass(frozen=True)
class WebSettings:
    host: str
    port: int  # 0: any free port (tests)
    token: str
    locale: str = "en"
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    trusted_proxies: tuple[str, ...] = TRUSTED_PROXIES
    header_timeout_s: float = HEADER_TIMEOUT_S
    # Where the worktrees are and how each runtime is started: a card's page names the
    # command that continues its agent's session in a terminal.
    workspaces: Path | None = None
    runtimes: Mapping[str, RuntimeSettings] = field(default_factory=dict)
    # Where browsers reach the board ([web] public_url): its origin may post forms too.
    public_url: str | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def caps(self) -> Caps:
        """The caps under this process's descriptor limit, as it is now."""
        return caps(self.max_connections, descriptor_limit())


def split_listen(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    return host.strip("[]"), int(port)


def web_settings(config: Config) -> WebSettings | None:
    """None without a [web] section, or with `board = false` (then only /metrics listens)."""
    if config.web is None or not config.web.board or config.web.token_file is None:
        return None
    host, port = split_listen(config.web.listen)
    return WebSettings(
        host,
        port,
        read_secret(config.web.token_file),
        config.bot.locale,
        max_connections=config.web.max_connections,
        trusted_proxies=tuple(config.web.trusted_proxies),
        workspaces=config.bot.workspaces,
        runtimes=dict(config.runtimes),
        public_url=config.web.public_url,
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def describe_caps(settings: WebSettings, found: Caps) -> str:
    line = f"at most {found.connections} connections at once, {found.streams} of them live pages"
    if found.lowered:
        line += (
            f" (a quarter of this process's limit of {found.soft_limit} open files; "
            f"[web] max_connections is {settings.max_connections})"
        )
    line += f"; request headers within {settings.header_timeout_s:g} s"
    proxies = ", ".join(settings.trusted_proxies) or "none"
    return f"{line}; X-Forwarded-Proto trusted from {proxies}"


def describe(config: Config) -> str:
    """One line for `chatbot check`: where the board listens, or that it is off."""
    if config.web is None:
        return "web board: off (no [web] section)"
    if not config.web.board:
        return "web board: off ([web] board = false)"
    host, port = split_listen(config.web.listen)
    settings = WebSettings(
        host,
        port,
        "",
        max_connections=config.web.max_connections,
        trusted_proxies=tuple(config.web.trusted_proxies),
        workspaces=config.bot.workspaces,
        runtimes=dict(config.runtimes),
    )
    line = (
        f"web board: {settings.url} (token from {config.web.token_file}; open "
        f"{settings.url}?token=<token> once per browser); "
        + describe_caps(settings, settings.caps())
    )
    if config.web.public_url:
        line += f"; /web sign-in links go to {config.web.public_url}signin/…"
    else:
        line += "; /web makes no sign-in links: set [web] public_url to the board's address"
    if not _is_loopback(host):
        line += (
            f"; {host} is reachable from other hosts: put a TLS proxy in front, or the token "
            "crosses the network in clear text"
        )
    return line
