"""Matrix files without Synapse: the safe download's refusals against a small aiohttp
homeserver, an upload the server refuses, and a media event through the transport."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from nio.crypto.attachments import encrypt_attachment

from chatbot.transports.base import (
    IncomingMessage,
    MemoryStateStore,
    Outgoing,
    Room,
    TransportError,
)
from chatbot.transports.files import FileFetchError, FileRefusedSource, FileTooLarge, OutgoingFile
from chatbot.transports.matrix.download import download
from chatbot.transports.matrix.media import AttachmentKeys, MediaRef
from chatbot.transports.matrix.transport import MatrixSettings, MatrixTransport, make_client
from tests.transports.test_matrix_transport import ME, make, sync

TOKEN = "secret-token"
BODY = bytes(range(256)) * 40  # 10,240 bytes
STREAMED = 16 * 1024 * 512  # 8 MiB, far more than any socket buffer holds


@dataclass
class Homeserver:
    """A media repository that serves what each test needs, and says what it was asked."""

    url: str = ""
    requests: list[str] = field(default_factory=list)
    uploads: list[bytes] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    cut: asyncio.Event = field(default_factory=asyncio.Event)
    written: int = 0
    upload_refusal: tuple[int, dict[str, Any]] | None = None

    async def media(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(request.path)
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return web.json_response({"errcode": "M_MISSING_TOKEN", "error": "no"}, status=401)
        server, media_id = request.match_info["server"], request.match_info["media_id"]
        if server == "old.example" and "/client/v1/" in request.path:
            return web.json_response(
                {"errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"}, status=404
            )
        if media_id == "moved":
            raise web.HTTPFound("http://169.254.169.254/latest/meta-data")
        if media_id == "stream":
            return await self._stream(request)
        if media_id not in self.files:
            return web.json_response({"errcode": "M_NOT_FOUND", "error": "Not found"}, status=404)
        return web.Response(body=self.files[media_id], content_type="application/octet-stream")

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        """A body with no Content-Length, much larger than any limit: chunked."""
        resp = web.StreamResponse()
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        try:
            while self.written < STREAMED:
                await resp.write(b"x" * 16384)
                self.written += 16384
        except (ConnectionError, RuntimeError):
            self.cut.set()  # the client went away before the end
            raise
        return resp

    async def upload(self, request: web.Request) -> web.Response:
        self.uploads.append(await request.read())
        if self.upload_refusal is not None:
            status, answer = self.upload_refusal
            return web.json_response(answer, status=status)
        return web.json_response({"content_uri": f"mxc://localhost/up{len(self.uploads)}"})

    async def send(self, request: web.Request) -> web.Response:
        self.sent.append(await request.json())
        return web.json_response({"event_id": f"$sent{len(self.sent)}"})


@pytest.fixture
async def homeserver() -> AsyncIterator[Homeserver]:
    hs = Homeserver()
    app = web.Application()
    for base in ("/_matrix/client/v1/media/download", "/_matrix/media/v3/download"):
        app.router.add_get(base + "/{server}/{media_id}", hs.media)
    app.router.add_post("/_matrix/media/v3/upload", hs.upload)
    app.router.add_put("/_matrix/client/v3/rooms/{room}/send/{type}/{txn}", hs.send)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    hs.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
    yield hs
    await runner.cleanup()


def ref(media_id: str, server: str = "localhost", **kw: Any) -> MediaRef:
    return MediaRef(mxc=f"mxc://{server}/{media_id}", server=server, media_id=media_id, **kw)


async def test_a_file_comes_whole_from_the_authenticated_endpoint(homeserver) -> None:
    homeserver.files["img"] = BODY
    assert await download(homeserver.url, TOKEN, ref("img"), len(BODY)) == BODY
    assert homeserver.requests == ["/_matrix/client/v1/media/download/localhost/img"]


async def test_a_server_without_authenticated_media_is_asked_the_old_way(homeserver) -> None:
    homeserver.files["img"] = BODY
    got = await download(homeserver.url, TOKEN, ref("img", "old.example"), len(BODY))
    assert got == BODY
    assert [p.split("/download")[0] for p in homeserver.requests] == [
        "/_matrix/client/v1/media",
        "/_matrix/media/v3",
    ]


async def test_a_declared_size_above_the_limit_is_refused_without_a_request(homeserver) -> None:
    homeserver.files["img"] = BODY
    with pytest.raises(FileTooLarge) as error:
        await download(homeserver.url, TOKEN, ref("img", declared_size=5000), 4999)
    assert error.value.limit == 4999 and error.value.seen == 5000
    assert homeserver.requests == []


async def test_a_lying_declared_size_meets_the_servers_content_length(homeserver) -> None:
    homeserver.files["img"] = BODY
    with pytest.raises(FileTooLarge) as error:
        await download(homeserver.url, TOKEN, ref("img", declared_size=10), 1000)
    assert error.value.seen == len(BODY)  # refused on the header, the body never read


async def test_a_body_without_length_stops_at_the_limit(homeserver) -> None:
    with pytest.raises(FileTooLarge) as error:
        await download(homeserver.url, TOKEN, ref("stream"), 100_000)
    assert error.value.limit == 100_000
    assert 100_000 < error.value.seen < 100_000 + 64 * 1024 + 1
    # The server sees the connection dropped: the rest of the 8 MiB is never sent.
    await asyncio.wait_for(homeserver.cut.wait(), 5)
    assert homeserver.written < STREAMED


async def test_a_redirect_is_refused_and_not_followed(homeserver) -> None:
    with pytest.raises(FileRefusedSource, match="fetches only from its own"):
        await download(homeserver.url, TOKEN, ref("moved"), 1000)
    assert len(homeserver.requests) == 1


async def test_a_refused_source_makes_no_request(homeserver) -> None:
    bad = MediaRef(mxc="https://evil.example/x", problem="not an mxc", refused=True)
    with pytest.raises(FileRefusedSource, match="not an mxc"):
        await download(homeserver.url, TOKEN, bad, 1000)
    assert homeserver.requests == []


async def test_an_error_answer_says_the_servers_reason(homeserver) -> None:
    with pytest.raises(FileFetchError, match="404 M_NOT_FOUND Not found"):
        await download(homeserver.url, TOKEN, ref("gone"), 1000)
    with pytest.raises(FileFetchError, match="401 M_MISSING_TOKEN"):
        await download(homeserver.url, "wrong", ref("gone"), 1000)


async def test_an_unreachable_homeserver_is_a_fetch_error() -> None:
    with pytest.raises(FileFetchError, match="could not be fetched"):
        await download("http://127.0.0.1:9", TOKEN, ref("img"), 1000)


def encrypted(plain: bytes) -> tuple[bytes, AttachmentKeys]:
    ciphertext, info = encrypt_attachment(plain)
    return ciphertext, AttachmentKeys(
        key=info["key"]["k"], iv=info["iv"], sha256=info["hashes"]["sha256"]
    )


async def test_an_encrypted_attachment_is_decrypted_in_memory(homeserver) -> None:
    homeserver.files["enc"], keys = encrypted(BODY)
    assert homeserver.files["enc"] != BODY
    assert await download(homeserver.url, TOKEN, ref("enc", keys=keys), len(BODY)) == BODY


async def test_a_tampered_encrypted_attachment_is_refused(homeserver) -> None:
    ciphertext, keys = encrypted(BODY)
    homeserver.files["enc"] = ciphertext[:-1] + bytes([ciphertext[-1] ^ 1])
    with pytest.raises(FileFetchError, match="SHA-256 hash does not match"):
        await download(homeserver.url, TOKEN, ref("enc", keys=keys), len(BODY))


# -- the transport ------------------------------------------------------------------


def transport(homeserver: Homeserver) -> MatrixTransport:
    settings = MatrixSettings(homeserver=homeserver.url, user_id=ME)
    t = MatrixTransport(settings, MemoryStateStore())
    t.client = make_client(settings)
    t.client.restore_login(ME, "DEV", TOKEN)
    return t


async def test_a_file_goes_out_with_its_url_name_type_and_reply(homeserver) -> None:
    t = transport(homeserver)
    assert t.sends_files
    try:
        patch = OutgoingFile("fix.patch", "text/x-diff", b"--- a\n+++ b\n")
        event_id = await t.send(
            Outgoing(
                Room("matrix", "!r:localhost"), "", reply_to="$diff", txn_id="row-1", file=patch
            )
        )
    finally:
        await t.client.close()
    assert event_id == "$sent1" and homeserver.uploads == [patch.data]
    (content,) = homeserver.sent
    assert content["msgtype"] == "m.file" and content["url"] == "mxc://localhost/up1"
    assert content["body"] == content["filename"] == "fix.patch"
    assert content["info"] == {"mimetype": "text/x-diff", "size": len(patch.data)}
    assert content["m.relates_to"] == {"m.in_reply_to": {"event_id": "$diff"}}


async def test_an_upload_the_server_refuses_is_a_transport_error_with_its_reason(
    homeserver,
) -> None:
    homeserver.upload_refusal = (
        413,
        {"errcode": "M_TOO_LARGE", "error": "Cannot upload files larger than 1M"},
    )
    t = transport(homeserver)
    try:
        with pytest.raises(TransportError) as error:
            big = OutgoingFile("big.bin", "", b"x" * 100)
            await t.send(Outgoing(Room("matrix", "!r:localhost"), "", file=big))
    finally:
        await t.client.close()
    assert "413 M_TOO_LARGE Cannot upload files larger than 1M" in str(error.value)
    assert homeserver.sent == [], "nothing is posted for a file that was not taken"


async def test_a_media_event_comes_through_the_transport_once_with_a_bound_fetch(
    homeserver,
) -> None:
    t, got, _ = make()
    t.client.homeserver, t.client.access_token = homeserver.url, TOKEN
    homeserver.files["shot"] = BODY
    image = {
        "type": "m.room.message",
        "sender": "@owner:localhost",
        "event_id": "$img",
        "origin_server_ts": 1,
        "content": {
            "msgtype": "m.image",
            "body": "see here",
            "filename": "shot.png",
            "url": "mxc://localhost/shot",
            "info": {"mimetype": "image/png", "size": len(BODY)},
            "m.relates_to": {"m.in_reply_to": {"event_id": "$run"}},
        },
    }
    await t._on_sync(sync("s1", [image]))
    await t._on_sync(sync("s1", [image]))  # the same batch again: handled once
    ((message, _),) = got
    assert isinstance(message, IncomingMessage)
    assert message.text == "see here" and message.reply_to == "$run"
    (file,) = message.files
    assert file.name == "shot.png" and not file.encrypted
    assert await file.fetch(len(BODY)) == BODY
    with pytest.raises(FileTooLarge):
        await file.fetch(len(BODY) - 1)
