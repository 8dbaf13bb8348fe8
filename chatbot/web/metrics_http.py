"""/metrics over HTTP: on the board's listener, and on `[web] metrics_listen` of its own.

Either way it needs a Bearer token: `[web] metrics_token_file`'s, or the board's
(`token_file`). No token or a wrong one: 401 with a WWW-Authenticate header, and
nothing of the board. Neither listener writes an access log, and the tokens are never
logged. A port that is taken is logged and the bot serves on without that listener.
"""

from __future__ import annotations

import hmac
import logging
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Handler

from chatbot.config import Config
from chatbot.secret_files import read_secret
from chatbot.web.metrics import Metrics
from chatbot.web.settings import HEADER_TIMEOUT_S, WebSettings, split_listen

log = logging.getLogger(__name__)

PATH = "/metrics"
CHALLENGE = 'Bearer realm="intent-board metrics"'
UNAUTHORIZED = {
    "en": "401: /metrics needs Authorization: Bearer <token>, the token in the file [web] "
    "metrics_token_file or token_file names.\n",
    "de": "401: /metrics braucht Authorization: Bearer <token>, das Token aus der Datei, die "
    "[web] metrics_token_file oder token_file nennt.\n",
}


@dataclass(frozen=True)
class MetricsSettings:
    # Each token that opens /metrics (the metrics token, the board's token).
    tokens: tuple[str, ...]
    locale: str
    # Its own listener (host, port), or None: only on the board's.
    listen: tuple[str, int] | None
    on_board: bool


def metrics_settings(config: Config) -> MetricsSettings | None:
    """None without [web]: then no /metrics anywhere."""
    section = config.web
    if section is None:
        return None
    tokens = tuple(read_secret(path) for path in section.metrics_tokens.values())
    listen = split_listen(section.metrics_listen) if section.metrics_listen else None
    return MetricsSettings(tokens, config.bot.locale, listen, on_board=section.board)


def describe(config: Config) -> str:
    """One line for `chatbot check`: where /metrics is served, and with which token."""
    section = config.web
    if section is None:
        return "metrics: off (no [web] section)"
    places = []
    if section.board:
        host, port = split_listen(section.listen)
        places.append(WebSettings(host, port, "").url.rstrip("/") + PATH)
    if section.metrics_listen:
        host, port = split_listen(section.metrics_listen)
        places.append(WebSettings(host, port, "").url.rstrip("/") + PATH + " (also for workers)")
    tokens = " or ".join(f"{key} ({path})" for key, path in section.metrics_tokens.items())
    return f"metrics: {', '.join(places)}; Bearer token from {tokens}"


class MetricsDoor:
    """Answers /metrics to a request with a token it knows."""

    def __init__(self, metrics: Metrics, tokens: tuple[str, ...], locale: str = "en"):
        self.metrics = metrics
        self.refusal = UNAUTHORIZED.get(locale, UNAUTHORIZED["en"])
        self._tokens = tuple(token.encode() for token in tokens)

    def allowed(self, request: web.Request) -> bool:
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            return False
        given = value.strip().encode()
        # Every token compared, so the time taken does not say which one nearly matched.
        matches = [hmac.compare_digest(given, token) for token in self._tokens]
        return any(matches)

    async def serve(self, request: web.Request) -> web.Response:
        if not self.allowed(request):
            return web.Response(
                status=401,
                text=self.refusal,
                headers={"WWW-Authenticate": CHALLENGE, "Cache-Control": "no-store"},
            )
        body, content_type = await self.metrics.exposition(request.headers.get("Accept", ""))
        return web.Response(
            body=body, headers={"Content-Type": content_type, "Cache-Control": "no-store"}
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """On the board's listener: /metrics before the board's own sign-in."""
        # Other methods go on to the board, which reads and answers GET and HEAD only.
        if request.path == PATH and request.method in ("GET", "HEAD"):
            return await self.serve(request)
        return await handler(request)


class MetricsListener:
    """`[web] metrics_listen`: /metrics alone, with the board or without it."""

    def __init__(self, door: MetricsDoor, host: str, port: int):
        self.host = host
        self.port = port
        self.app = web.Application()
        self.app.add_routes([web.get(PATH, door.serve)])
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return WebSettings(self.host, self.port, "").url.rstrip("/") + PATH

    async def start(self) -> bool:
        """Listen; False (and one line in the log) when the address cannot be had."""
        runner = web.AppRunner(self.app, access_log=None, keepalive_timeout=HEADER_TIMEOUT_S)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        try:
            await site.start()
        except OSError as error:
            await runner.cleanup()
            log.error(
                "metrics: cannot listen on %s (%s); serving without it. Free the port or "
                "change [web] metrics_listen, then restart",
                self.url,
                error.strerror or error,
            )
            return False
        self._runner = runner
        self.port = runner.addresses[0][1]
        log.info("metrics on %s", self.url)
        return True

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
