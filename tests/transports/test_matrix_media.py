"""What a Matrix media event says (m.image, m.file, m.audio, m.video) and what the bot's
own file message looks like: pure functions, no server."""

from __future__ import annotations

from typing import Any

import pytest

from chatbot.transports.base import IncomingMessage
from chatbot.transports.files import FileFetchError
from chatbot.transports.matrix.events import Dropped, parse_event
from chatbot.transports.matrix.media import (
    MediaRef,
    file_content,
    msgtype_for,
    parse_mxc,
    read_attachment,
)

ME = "@bot:localhost"
ROOM = "!r:localhost"
KEYS = {
    "v": "v2",
    "key": {"kty": "oct", "alg": "A256CTR", "k": "a2V5", "ext": True, "key_ops": ["decrypt"]},
    "iv": "aXZpdml2aXZpdml2AAAAAA",
    "hashes": {"sha256": "aGFzaA"},
}


def ev(content: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "m.room.message",
        "sender": "@owner:localhost",
        "event_id": "$img",
        "content": content,
        **extra,
    }


def parse(content: dict[str, Any], **kw: Any) -> tuple[Any, list[MediaRef]]:
    bound: list[MediaRef] = []

    def fetcher(ref: MediaRef):
        bound.append(ref)

        async def fetch(limit: int) -> bytes:
            return b"bytes"

        return fetch

    result = parse_event(ev(content), room_id=ROOM, own_user_id=ME, fetcher=fetcher, **kw)
    return result, bound


def test_a_captioned_image_is_a_message_with_one_file_and_the_caption_as_text() -> None:
    m, bound = parse(
        {
            "msgtype": "m.image",
            "body": "the login page breaks",
            "filename": "screen.png",
            "url": "mxc://localhost/AbC_12-x",
            "info": {"mimetype": "image/PNG", "size": 1234, "w": 10, "h": 10},
        },
        encrypted=True,
    )
    assert isinstance(m, IncomingMessage)
    assert m.text == "the login page breaks" and m.reply_to is None
    (f,) = m.files
    assert (f.name, f.declared_type, f.declared_size) == ("screen.png", "image/png", 1234)
    assert f.source == "mxc://localhost/AbC_12-x" and f.encrypted and not f.voice
    assert bound == [
        MediaRef(
            mxc="mxc://localhost/AbC_12-x",
            server="localhost",
            media_id="AbC_12-x",
            declared_size=1234,
        )
    ]


def test_without_a_filename_the_body_is_the_name_and_there_is_no_caption() -> None:
    m, _ = parse({"msgtype": "m.file", "body": "build.log", "url": "mxc://localhost/a"})
    assert m.text == "" and m.files[0].name == "build.log"
    assert m.files[0].declared_type == "" and m.files[0].declared_size is None
    assert not m.files[0].encrypted
    # The same name in both is no caption either.
    same, _ = parse(
        {"msgtype": "m.file", "body": "a.txt", "filename": "a.txt", "url": "mxc://localhost/a"}
    )
    assert same.text == ""


@pytest.mark.parametrize(
    "content",
    [
        {"msgtype": "m.audio", "body": "Voice message", "url": "mxc://localhost/v"},
        {
            "msgtype": "m.file",
            "body": "n.ogg",
            "url": "mxc://localhost/v",
            "org.matrix.msc3245.voice": {},
        },
    ],
)
def test_voice_notes(content: dict[str, Any]) -> None:
    m, _ = parse(content)
    assert m.files[0].voice


def test_a_reply_with_a_file_names_its_target_and_drops_the_quote() -> None:
    m, _ = parse(
        {
            "msgtype": "m.image",
            "body": "> <@bot:localhost> which page?\n\nthis one",
            "filename": "p.png",
            "url": "mxc://localhost/p",
            "m.relates_to": {"m.in_reply_to": {"event_id": "$question"}},
        }
    )
    assert m.reply_to == "$question" and m.text == "this one"


def test_the_name_loses_control_and_format_characters_and_is_bounded() -> None:
    m, _ = parse(
        {
            "msgtype": "m.file",
            "body": "a\u202egpj.exe\n\x00" + "x" * 500,
            "url": "mxc://localhost/a",
        }
    )
    name = m.files[0].name
    assert "\u202e" not in name and "\n" not in name and "\x00" not in name
    assert name.startswith("agpj.exe") and len(name) == 200


def test_an_encrypted_attachment_carries_its_keys_and_type_from_the_file_object() -> None:
    m, (ref,) = parse(
        {
            "msgtype": "m.image",
            "body": "shot.png",
            "file": {"url": "mxc://localhost/enc", "mimetype": "image/png", **KEYS},
        },
        encrypted=True,
    )
    assert m.files[0].declared_type == "image/png" and m.files[0].encrypted
    assert ref.keys is not None and ref.keys.key == "a2V5" and ref.keys.sha256 == "aGFzaA"
    assert ref.problem == "" and "a2V5" not in repr(ref), "the key must not reach a log"


@pytest.mark.parametrize(
    "file, problem",
    [
        ({**KEYS, "v": "v1"}, "not v2"),
        ({**KEYS, "key": {"k": "a2V5", "alg": "A128CBC"}}, "algorithm"),
        ({**KEYS, "key": {"alg": "A256CTR"}}, "key is missing"),
        ({k: v for k, v in KEYS.items() if k != "iv"}, "no iv"),
        ({**KEYS, "hashes": {"sha1": "x"}}, "SHA-256"),
    ],
)
def test_unusable_keys_still_bring_the_file_whose_fetch_will_say_why(
    file: dict[str, Any], problem: str
) -> None:
    attachment = read_attachment(
        {"msgtype": "m.file", "body": "x", "file": {"url": "mxc://localhost/e", **file}}
    )
    assert attachment is not None
    assert problem in attachment.ref.problem and not attachment.ref.refused


@pytest.mark.parametrize(
    "uri",
    [
        "https://evil.example/file.png",
        "mxc://localhost/../../admin",
        "mxc://localhost/a/b",
        "mxc://local host/a",
        "mxc://localhost/a?x=1",
        "mxc:///a",
        "mxc://localhost/",
        "mxc://localhost:99999999/a",
        42,
    ],
)
def test_a_malformed_mxc_is_refused_as_a_source(uri: object) -> None:
    assert parse_mxc(uri) is None
    attachment = read_attachment({"msgtype": "m.image", "body": "x.png", "url": uri})
    assert attachment is not None and attachment.ref.refused and attachment.ref.problem


@pytest.mark.parametrize(
    "uri, parts",
    [
        ("mxc://localhost/abc", ("localhost", "abc")),
        ("mxc://matrix.example.org:8448/A-b_9", ("matrix.example.org:8448", "A-b_9")),
        ("mxc://[::1]:8008/m", ("[::1]:8008", "m")),
        ("mxc://10.0.0.1/m", ("10.0.0.1", "m")),
    ],
)
def test_well_formed_mxc(uri: str, parts: tuple[str, str]) -> None:
    assert parse_mxc(uri) == parts


@pytest.mark.parametrize(
    "content, reason",
    [
        ({"msgtype": "m.image", "body": "no url"}, "media-without-file"),
        ({"msgtype": "m.file", "body": "x", "file": "not an object"}, "media-without-file"),
        (
            {"msgtype": "m.location", "body": "geo", "url": "mxc://localhost/a"},
            "msgtype:m.location",
        ),
    ],
)
def test_media_without_a_file_is_dropped(content: dict[str, Any], reason: str) -> None:
    assert parse(content)[0] == Dropped(reason)


@pytest.mark.parametrize(
    "info",
    [
        {"size": -1},
        {"size": True},
        {"size": "12"},
        {"size": 2**60},
        {"mimetype": "text/html\r\nX: y"},
    ],
)
def test_nonsense_in_info_is_ignored(info: dict[str, Any]) -> None:
    m, _ = parse({"msgtype": "m.file", "body": "x", "url": "mxc://localhost/a", "info": info})
    assert m.files[0].declared_size is None and m.files[0].declared_type == ""


async def test_without_a_transport_the_fetch_says_it_cannot() -> None:
    m = parse_event(
        ev({"msgtype": "m.file", "body": "x", "url": "mxc://localhost/a"}),
        room_id=ROOM,
        own_user_id=ME,
    )
    with pytest.raises(FileFetchError, match="cannot be fetched here"):
        await m.files[0].fetch(100)


# -- out ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type, msgtype",
    [
        ("image/png", "m.image"),
        ("audio/ogg", "m.audio"),
        ("video/mp4", "m.video"),
        ("text/x-diff", "m.file"),
        ("application/octet-stream", "m.file"),
    ],
)
def test_msgtype_follows_the_type(content_type: str, msgtype: str) -> None:
    assert msgtype_for(content_type) == msgtype


def test_a_file_in_a_clear_room_has_a_url_and_its_name_as_body() -> None:
    content = file_content(
        name="fix.patch", content_type="text/x-diff", size=12, url="mxc://localhost/p"
    )
    assert content == {
        "msgtype": "m.file",
        "body": "fix.patch",
        "filename": "fix.patch",
        "info": {"mimetype": "text/x-diff", "size": 12},
        "m.mentions": {},
        "url": "mxc://localhost/p",
    }


def test_an_encrypted_file_has_the_file_object_no_url_a_caption_and_a_reply() -> None:
    content = file_content(
        name="fix.patch",
        content_type="text/x-diff",
        size=12,
        url="mxc://localhost/p",
        keys=KEYS,
        caption="the change",
        reply_to="$diff",
    )
    assert "url" not in content
    assert content["file"] == {"url": "mxc://localhost/p", "mimetype": "text/x-diff", **KEYS}
    assert content["body"] == "the change" and content["filename"] == "fix.patch"
    assert content["m.relates_to"] == {"m.in_reply_to": {"event_id": "$diff"}}
    # And it reads back as what was sent: the caption as text, the name as name.
    m, _ = parse(content)
    assert m.text == "the change" and m.files[0].name == "fix.patch"
    assert m.reply_to == "$diff"


def test_a_type_that_is_no_type_goes_out_as_octet_stream() -> None:
    content = file_content(name="x", content_type="nonsense", size=1, url="mxc://localhost/x")
    assert content["info"]["mimetype"] == "application/octet-stream"
    assert content["msgtype"] == "m.file"
