"""The safe download of a file link, against a small HTTP server on 127.0.0.1 that
counts what it was asked and what it managed to send."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from chatbot.transports.files import FileFetchError, FileRefusedSource, FileTooLarge
from chatbot.transports.xmpp.download import CHUNK, UploadHosts, download

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
#: What the endless server tries to send: far more than any socket buffers hold.
ENDLESS = 256 * 1024 * 1024


class Server:
    """Serves /file, /big (announces 10 MB, sends one chunk and waits), /endless (no
    Content-Length, streams until the client goes), /moved (302) and /gone (404)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.written = 0
        self.endless_done = asyncio.Event()
        self.release = asyncio.Event()
        self.port = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(request.path)
        if request.path == "/file":
            return web.Response(body=PNG, content_type="image/png")
        if request.path == "/moved":
            raise web.HTTPFound(f"http://127.0.0.1:{self.port}/file")
        if request.path == "/big":
            resp = web.StreamResponse()
            resp.content_length = 10_000_000
            await resp.prepare(request)
            await resp.write(b"x" * CHUNK)
            await self.release.wait()  # the rest would come only if someone waited for it
            return resp
        if request.path == "/endless":
            resp = web.StreamResponse()  # chunked: no Content-Length to refuse up front
            await resp.prepare(request)
            try:
                while self.written < ENDLESS:
                    await resp.write(b"y" * CHUNK)
                    self.written += CHUNK
            finally:
                self.endless_done.set()
            return resp
        raise web.HTTPNotFound()


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    srv = Server()
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", srv.handle)
    runner = web.AppRunner(app, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    srv.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield srv
    srv.release.set()
    await runner.cleanup()


def listed(server: Server) -> UploadHosts:
    return UploadHosts.build([f"127.0.0.1:{server.port}"], [])


async def test_a_listed_host_gives_the_exact_bytes(server: Server) -> None:
    url = f"http://127.0.0.1:{server.port}/file"
    assert await download(url, len(PNG), hosts=listed(server)) == PNG


async def test_a_content_length_above_the_limit_is_refused_before_the_body(server: Server) -> None:
    url = f"http://127.0.0.1:{server.port}/big"
    # The server holds back the body: reading it would hang until the timeout.
    async with asyncio.timeout(5):
        with pytest.raises(FileTooLarge) as caught:
            await download(url, 1_000_000, hosts=listed(server), within=30)
    assert caught.value.limit == 1_000_000 and caught.value.seen == 10_000_000
    assert "larger than the limit of 1000000 bytes" in str(caught.value)


async def test_a_body_without_length_stops_at_the_limit(server: Server) -> None:
    url = f"http://127.0.0.1:{server.port}/endless"
    limit = 256 * 1024
    with pytest.raises(FileTooLarge) as caught:
        await download(url, limit, hosts=listed(server))
    # Read: the limit and at most one more chunk.
    assert limit < caught.value.seen <= limit + CHUNK
    # The connection was dropped: the server's writes failed long before the end
    # (what it managed to send is what loopback's socket buffers held).
    await asyncio.wait_for(server.endless_done.wait(), 10)
    assert server.written < ENDLESS // 8, server.written


async def test_a_redirect_is_refused_and_not_followed(server: Server) -> None:
    url = f"http://127.0.0.1:{server.port}/moved"
    with pytest.raises(
        FileRefusedSource, match="redirected the link to .*/file; the bot follows no"
    ):
        await download(url, 1_000_000, hosts=listed(server))
    assert server.requests == ["/moved"]


async def test_a_missing_file_says_so(server: Server) -> None:
    url = f"http://127.0.0.1:{server.port}/gone"
    with pytest.raises(FileFetchError, match="answered 404 Not Found: the file is gone"):
        await download(url, 1_000_000, hosts=listed(server))


async def test_a_loopback_link_not_listed_is_refused_without_a_request(server: Server) -> None:
    hosts = UploadHosts.build([], ["localhost", "example.org"])
    with pytest.raises(
        FileRefusedSource,
        match="the link points to 127.0.0.1, a bare IP address, not to an upload service this "
        "bot fetches from \\(allowed: hosts of localhost, example.org at public addresses\\)",
    ):
        await download(f"http://127.0.0.1:{server.port}/file", 1_000_000, hosts=hosts)
    # Listed, but on another port: refused all the same.
    other = UploadHosts.build([f"127.0.0.1:{server.port + 1}"], [])
    with pytest.raises(FileRefusedSource, match="allowed: 127.0.0.1:"):
        await download(f"http://127.0.0.1:{server.port}/file", 1_000_000, hosts=other)
    assert server.requests == []


async def test_another_host_than_allowed_is_refused_without_a_request(server: Server) -> None:
    hosts = UploadHosts.build([], ["example.org"])
    with pytest.raises(FileRefusedSource, match="points to localhost, not to an upload service"):
        await download(f"http://localhost:{server.port}/file", 1_000_000, hosts=hosts)
    assert server.requests == []


async def test_a_default_host_at_a_loopback_address_is_refused(server: Server) -> None:
    # "localhost" is one of the owners' domains here, and resolves to 127.0.0.1.
    hosts = UploadHosts.build([], ["localhost"])
    with pytest.raises(FileRefusedSource, match="localhost resolves to 127.0.0.1 \\(a loopback"):
        await download(f"http://localhost:{server.port}/file", 1_000_000, hosts=hosts)
    assert server.requests == []
    # Listed explicitly, the same host is trusted at its loopback address.
    trusted = UploadHosts.build([f"localhost:{server.port}"], ["localhost"])
    assert await download(f"http://localhost:{server.port}/file", len(PNG), hosts=trusted) == PNG


async def test_a_host_that_does_not_answer_says_where() -> None:
    with socket.socket() as s:  # a port nothing listens on once this is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    hosts = UploadHosts.build([f"127.0.0.1:{port}"], [])
    with pytest.raises(FileFetchError, match=f"could not be fetched from 127.0.0.1:{port}"):
        await download(f"http://127.0.0.1:{port}/file", 10, hosts=hosts)
