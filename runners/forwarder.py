"""The sandboxed agent's only way out: an HTTP forwarder to its model provider.

One forwarder serves one run. It listens on a Unix socket in a folder only the bot's
user can open; the sandbox binds that socket in, and the relay inside
(`runners.sandbox_relay`) serves it on 127.0.0.1 to the CLI, whose base URL points
there. Each request goes to the one upstream origin the runtime is configured with,
whatever host the CLI named.

Keys stay outside. The CLI inside gets a placeholder for each key variable
(`placeholders`); the forwarder puts the real value wherever a request carries the
placeholder (an `Authorization`, `x-api-key` or `x-goog-api-key` header, a `key=`
parameter), so one mechanism serves every runtime's way of sending its key. Responses,
streamed or not, pass through unchanged.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import ClientSession, ClientTimeout, web

log = logging.getLogger(__name__)

# Not forwarded: they describe one hop, or are set anew for the upstream.
HOP_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
MAX_REQUEST_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Forwarding:
    """A running forwarder: its socket, and the placeholder the CLI gets for each key."""

    socket: Path
    placeholders: Mapping[str, str]
    #: A resolv.conf naming the relay's refusing name server (127.0.0.1).
    resolv_conf: Path


def _origin(base_url: str) -> str:
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}"


def _swap(text: str, keys: Mapping[str, str]) -> str:
    for placeholder, value in keys.items():
        text = text.replace(placeholder, value)
    return text


def _app(origin: str, keys: Mapping[str, str], session_box: list[ClientSession]) -> web.Application:
    async def forward(request: web.Request) -> web.StreamResponse:
        headers = {
            name: _swap(value, keys)
            for name, value in request.headers.items()
            if name.lower() not in HOP_HEADERS
        }
        url = origin + _swap(request.rel_url.raw_path_qs, keys)
        body = await request.read()
        session = session_box[0]
        try:
            async with session.request(
                request.method, url, headers=headers, data=body, allow_redirects=False
            ) as upstream:
                response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
                for name, value in upstream.headers.items():
                    if name.lower() not in HOP_HEADERS:
                        response.headers.add(name, value)
                await response.prepare(request)
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
                return response
        except OSError as error:
            # The provider is unreachable: the CLI sees a gateway error, as from any proxy.
            log.warning("provider forwarder: %s unreachable: %s", origin, error)
            return web.Response(status=502, text=f"the provider {origin} is unreachable\n")

    app = web.Application(client_max_size=MAX_REQUEST_BYTES)
    app.router.add_route("*", "/{tail:.*}", forward)
    return app


@contextlib.asynccontextmanager
async def forwarding(base_url: str, keys: Mapping[str, str]) -> AsyncIterator[Forwarding]:
    """A forwarder to `base_url`'s origin for one run; `keys` maps each key variable
    to its real value. Gone, with its socket, when the block ends."""
    origin = _origin(base_url)
    placeholders = {name: f"sandboxed-{secrets.token_hex(16)}" for name in keys}
    swaps = {placeholders[name]: value for name, value in keys.items()}
    folder = Path(tempfile.mkdtemp(prefix="intent-board-provider-"))
    path = folder / "provider.sock"
    resolv = folder / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n", encoding="utf-8")
    box: list[ClientSession] = []
    # Upstream reads may be long (a model thinking); the run's own watchdogs bound them.
    session = ClientSession(
        timeout=ClientTimeout(total=None, sock_connect=30), auto_decompress=False
    )
    box.append(session)
    runner = web.AppRunner(_app(origin, swaps, box), access_log=None, handle_signals=False)
    try:
        await runner.setup()
        site = web.UnixSite(runner, str(path))
        await site.start()
        yield Forwarding(path, placeholders, resolv)
    finally:
        await runner.cleanup()
        await session.close()
        shutil.rmtree(folder, ignore_errors=True)
