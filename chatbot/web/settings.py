"""The web board's settings from the configuration, and what `chatbot check` says of them."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from chatbot.config import Config
from chatbot.secret_files import read_secret


@dataclass(frozen=True)
class WebSettings:
    host: str
    port: int  # 0: any free port (tests)
    token: str
    locale: str = "en"

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"


def split_listen(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    return host.strip("[]"), int(port)


def web_settings(config: Config) -> WebSettings | None:
    """None without a [web] section: then nothing listens."""
    if config.web is None:
        return None
    host, port = split_listen(config.web.listen)
    return WebSettings(host, port, read_secret(config.web.token_file), config.bot.locale)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def describe(config: Config) -> str:
    """One line for `chatbot check`: where the board listens, or that it is off."""
    if config.web is None:
        return "web board: off (no [web] section)"
    host, port = split_listen(config.web.listen)
    settings = WebSettings(host, port, "")
    line = (
        f"web board: {settings.url} (token from {config.web.token_file}; open "
        f"{settings.url}?token=<token> once per browser)"
    )
    if not _is_loopback(host):
        line += (
            f"; {host} is reachable from other hosts: put a TLS proxy in front, or the token "
            "crosses the network in clear text"
        )
    return line
