"""Files over XMPP against the real Prosody and its real upload service (mod_http_file_share):
a peer uploads and sends a link as Conversations does, the bot's transport hands it over
as a file whose fetch gets the exact bytes; the bot's send_file arrives as a link a
client shows inline. The upload service is on loopback, so the bot fetches from it only
with its host listed in upload_hosts: without that, the same link is refused."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import aiohttp
import pytest

from chatbot.transports.base import Identity, IncomingMessage, Outgoing, Room
from chatbot.transports.files import FileRefusedSource, FileTooLarge, OutgoingFile
from chatbot.transports.xmpp import oob
from chatbot.transports.xmpp.stanzas import NS_REPLY, trusted_stanza_id

from .conftest import unique


def png(width: int = 4, height: int = 3) -> bytes:
    """A real, small PNG made here (rows of grey pixels)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(
        b"\x00" + bytes([(x * 40 + y) % 256 for x in range(width)]) for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def listed(info: dict[str, Any]) -> dict[str, Any]:
    return {"upload_hosts": (f"localhost:{info['http_port']}",)}


def reply_target(msg: Any) -> str | None:
    el = msg.xml.find(f"{{{NS_REPLY}}}reply")
    return el.get("id") if el is not None else None


async def get(url: str) -> bytes:
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        assert resp.status == 200
        return await resp.read()


async def test_a_picture_sent_as_a_reply_in_the_room_is_a_file_the_bot_fetches(
    xmpp_bot, xmpp_peer, xmpp_info
) -> None:
    room = xmpp_info["rooms"]["public"]
    bot, inbox = await xmpp_bot(**listed(xmpp_info))
    owner = await xmpp_peer("owner")
    await owner.join(room, "owner")
    question = unique("which-page")
    asked = await bot.send(Outgoing(Room("xmpp", room), question))
    await owner.expect_body(question)

    picture = png()
    sid, url = await owner.upload_and_send(
        room, picture, "screen shot.png", "image/png", room=True, reply_to=asked
    )
    ev = await inbox.get(lambda e: isinstance(e, IncomingMessage) and e.envelope.message_id == sid)
    assert ev.reply_to == asked and ev.text == ""
    assert ev.envelope.sender == Identity("xmpp", "owner@localhost")
    (file,) = ev.files
    assert file.source == url and url.startswith(xmpp_info["upload_url"])
    assert file.name == "screen shot.png" and file.declared_type == "image/png"
    assert not file.voice
    assert await file.fetch(1_000_000) == picture


async def test_a_file_in_a_direct_chat_with_a_caption_and_its_limit(
    xmpp_bot, xmpp_peer, xmpp_info
) -> None:
    bot, inbox = await xmpp_bot(**listed(xmpp_info))
    owner = await xmpp_peer("owner")
    log = b"line\n" * 60_000  # 300,000 bytes
    caption = unique("the build log")
    sent, _ = await owner.upload_and_send(
        "bot@localhost", log, "build.log", "text/plain", caption=caption
    )
    ev = await inbox.get(lambda e: isinstance(e, IncomingMessage) and e.envelope.message_id == sent)
    assert ev.envelope.is_direct and ev.text == caption
    (file,) = ev.files
    # The service announces the length: refused before a byte of the body is read.
    with pytest.raises(FileTooLarge) as caught:
        await file.fetch(100_000)
    assert caught.value.seen == len(log)
    assert await file.fetch(len(log)) == log


async def test_without_upload_hosts_the_loopback_upload_service_is_refused(
    xmpp_bot, xmpp_peer, xmpp_info
) -> None:
    # localhost is the bot's own domain, allowed by default, but it is on loopback.
    bot, inbox = await xmpp_bot()
    owner = await xmpp_peer("owner")
    sent, _ = await owner.upload_and_send("bot@localhost", png(), "a.png", "image/png")
    ev = await inbox.get(lambda e: isinstance(e, IncomingMessage) and e.envelope.message_id == sent)
    with pytest.raises(FileRefusedSource, match="localhost resolves to 127.0.0.1 \\(a loopback"):
        await ev.files[0].fetch(1_000_000)


async def test_send_file_to_a_person_arrives_as_an_inline_link_after_its_caption(
    xmpp_bot, xmpp_peer, xmpp_info
) -> None:
    bot, inbox = await xmpp_bot()
    owner = await xmpp_peer("owner")
    asked = unique("diff please")
    question_id = await owner.say("bot@localhost", asked)
    await inbox.text(asked)

    patch = b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n" * 50
    caption = unique("the change")
    file_id = await bot.send(
        Outgoing(
            Identity("xmpp", "owner@localhost"),
            caption,
            reply_to=question_id,
            file=OutgoingFile("change.patch", "text/x-diff", patch),
        )
    )
    # The caption first, then the file.
    said = await owner.expect(lambda m: m["body"].endswith(caption) or bool(oob.links(m)))
    assert said["body"].endswith(caption) and not oob.links(said)
    got = await owner.expect(lambda m: bool(oob.links(m)))
    (url,) = oob.links(got)
    assert got["body"] == url and got["id"] == file_id and got["type"] == "chat"
    assert reply_target(got) == question_id and reply_target(said) == question_id
    assert url.startswith(xmpp_info["upload_url"]) and url.endswith("/change.patch")
    assert await get(url) == patch


async def test_send_file_to_the_room_returns_the_rooms_id(xmpp_bot, xmpp_peer, xmpp_info) -> None:
    room = xmpp_info["rooms"]["public"]
    bot, inbox = await xmpp_bot()
    owner = await xmpp_peer("owner")
    await owner.join(room, "owner")
    picture = png(8, 8)
    file_id = await bot.send(
        Outgoing(Room("xmpp", room), "", file=OutgoingFile("plot.png", "image/png", picture))
    )
    got = await owner.expect(lambda m: bool(oob.links(m)))
    assert got["type"] == "groupchat" and trusted_stanza_id(got, room) == file_id
    assert await get(oob.links(got)[0]) == picture
