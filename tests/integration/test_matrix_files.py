"""Files in and out over Matrix against the real Synapse: the bot's transport and real
matrix-nio clients, in an encrypted room (the owner's client has its own crypto store)
and in a clear one.

Every file is made in the test; every "encrypted" is what the receiving side saw: the
bot's transport says the event came encrypted, the owner's client decrypted the event
and then the attachment with the keys it carried.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chatbot.transports.base import IncomingMessage, Outgoing, Room
from chatbot.transports.files import FileFetchError, FileTooLarge, OutgoingFile
from chatbot.transports.matrix.transport import MatrixTransport

from .conftest import Inbox, unique
from .matrix_e2ee_peer import E2eePeer

WITHIN = 10.0
LIMIT = 20 * 1024 * 1024
PATCH = b"--- a/report.py\n+++ b/report.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def png(width: int = 4, height: int = 3) -> bytes:
    """A real PNG (RGB, every pixel different), made here."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    # Each row: filter type 0, then one RGB triple per pixel.
    rows = b"".join(
        b"\x00" + b"".join(bytes((x * 60, y * 80, (x + y) * 30)) for x in range(width))
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@dataclass
class EncryptedRoom:
    room: str
    bot: MatrixTransport
    inbox: Inbox
    owner: E2eePeer

    @property
    def target(self) -> Room:
        return Room("matrix", self.room)

    async def file_message(self, event_id: str) -> IncomingMessage:
        event = await self.inbox.get(lambda e: e.envelope.message_id == event_id, WITHIN)
        assert isinstance(event, IncomingMessage) and len(event.files) == 1, event
        return event


@pytest.fixture
async def encrypted(
    servers, matrix_info: dict[str, Any], matrix_bot, tmp_path: Path
) -> AsyncIterator[EncryptedRoom]:
    """An encrypted room the owner's E2EE client made, with the bot's transport in it
    and each side knowing the other's device."""
    acc = matrix_info["accounts"]["owner"]
    owner = await E2eePeer(
        matrix_info["homeserver"], acc["user_id"], acc["password"], tmp_path / "owner"
    ).start()
    try:
        bot_id = matrix_info["accounts"]["bot"]["user_id"]
        room = await owner.create_encrypted_room(invite=(bot_id,))
        bot, inbox = await matrix_bot(rooms=(room,), crypto_store=str(tmp_path / "crypto"))
        await owner.until(lambda: bot_id in owner.client.rooms[room].users, within=WITHIN)
        await owner.devices_of(bot_id, bot.client.device_id, within=WITHIN)
        yield EncryptedRoom(room, bot, inbox, owner)
    finally:
        await owner.stop()


def from_bot(room: str, event_id: str):
    return lambda r, ev: r == room and ev.get("event_id") == event_id


async def test_an_encrypted_png_in_reply_reaches_the_bot_and_decrypts_exactly(
    encrypted: EncryptedRoom,
) -> None:
    question = await encrypted.bot.send(Outgoing(encrypted.target, "Which page breaks?"))
    image = png()
    sent = await encrypted.owner.send_file(
        encrypted.room,
        image,
        name="screen.png",
        mimetype="image/png",
        msgtype="m.image",
        caption="this one, after the login",
        reply_to=question,
    )
    message = await encrypted.file_message(sent)
    assert message.reply_to == question
    assert message.text == "this one, after the login", "the MSC2530 caption is the text"
    assert message.envelope.device is not None and message.envelope.device.trusted
    (file,) = message.files
    assert file.encrypted and file.name == "screen.png" and not file.voice
    assert (file.declared_type, file.declared_size) == ("image/png", len(image))
    assert file.source.startswith("mxc://localhost/")
    assert await file.fetch(LIMIT) == image


async def test_oversized_files_are_refused_by_their_size_or_at_the_limit(
    encrypted: EncryptedRoom,
) -> None:
    data = bytes(range(256)) * 16  # 4096 bytes
    # Announced larger than the limit: refused on the announcement. The real file
    # would fit, so only the announcement can have refused it: nothing was fetched.
    big = await encrypted.owner.send_file(
        encrypted.room, data, name="big.log", mimetype="text/plain", size=50_000
    )
    (file,) = (await encrypted.file_message(big)).files
    with pytest.raises(FileTooLarge) as error:
        await file.fetch(10_000)
    assert (error.value.limit, error.value.seen) == (10_000, 50_000)

    # Announced small, really larger than the limit: stopped at the limit (here by the
    # server's Content-Length, before the body is read).
    liar = await encrypted.owner.send_file(
        encrypted.room, data, name="small.log", mimetype="text/plain", size=10
    )
    (file,) = (await encrypted.file_message(liar)).files
    assert file.declared_size == 10
    with pytest.raises(FileTooLarge) as error:
        await file.fetch(1000)
    assert (error.value.limit, error.value.seen) == (1000, len(data))
    assert await file.fetch(len(data)) == data, "within the limit the same file comes"


async def test_an_attachment_whose_hash_was_tampered_with_is_refused(
    encrypted: EncryptedRoom,
) -> None:
    data = b"the real log\n" * 10
    sent = await encrypted.owner.send_file(
        encrypted.room, data, name="run.log", mimetype="text/plain", hash_of=b"other bytes"
    )
    (file,) = (await encrypted.file_message(sent)).files
    with pytest.raises(FileFetchError, match="SHA-256 hash does not match"):
        await file.fetch(LIMIT)


async def test_the_bots_patch_is_an_encrypted_file_the_owner_decrypts_exactly(
    encrypted: EncryptedRoom,
) -> None:
    asked = await encrypted.owner.say(encrypted.room, "/diff report")
    posted = await encrypted.bot.send(
        Outgoing(
            encrypted.target,
            "the change of report",
            reply_to=asked,
            txn_id=unique("file"),
            file=OutgoingFile("report.patch", "text/x-diff", PATCH),
        )
    )
    _, event = await encrypted.owner.expect(from_bot(encrypted.room, posted), within=WITHIN)
    assert event["_decrypted"], "the file's event went out in clear"
    content = event["content"]
    assert content["msgtype"] == "m.file" and "url" not in content
    assert set(content["file"]) >= {"url", "key", "iv", "hashes", "v"}
    assert content["filename"] == "report.patch" and content["body"] == "the change of report"
    assert content["info"] == {"mimetype": "text/x-diff", "size": len(PATCH)}
    assert content["m.relates_to"]["m.in_reply_to"]["event_id"] == asked
    assert await encrypted.owner.fetch_file(content) == PATCH
    # The media repository holds only ciphertext.
    stored = await encrypted.owner.client.download(mxc=content["file"]["url"])
    assert stored.body != PATCH and len(stored.body) == len(PATCH)


async def test_in_a_clear_room_files_go_both_ways_in_clear(
    matrix_bot, matrix_peer, matrix_info
) -> None:
    room = matrix_info["rooms"]["public"]["room_id"]
    bot, inbox = await matrix_bot()
    owner = await matrix_peer("owner")
    await owner.join(room)

    image = png(2, 2)
    sent = await owner.send_file(
        room, image, name="tiny.png", mimetype="image/png", msgtype="m.image"
    )
    message = await inbox.get(lambda e: e.envelope.message_id == sent, WITHIN)
    assert isinstance(message, IncomingMessage) and message.text == ""
    (file,) = message.files
    assert not file.encrypted and file.name == "tiny.png"
    assert await file.fetch(LIMIT) == image

    patch = OutgoingFile("fix.patch", "text/x-diff", PATCH)
    posted = await bot.send(Outgoing(Room("matrix", room), "", reply_to=sent, file=patch))
    _, event = await owner.expect(lambda r, ev: ev.get("event_id") == posted, within=WITHIN)
    content = event["content"]
    assert content["msgtype"] == "m.file" and content["url"].startswith("mxc://localhost/")
    assert "file" not in content and content["body"] == "fix.patch"
    assert content["m.relates_to"]["m.in_reply_to"]["event_id"] == sent
    assert await owner.fetch_file(content) == PATCH
