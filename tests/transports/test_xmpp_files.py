"""XMPP files on the wire (XEP-0066 links in and out), the rules of which links the bot
fetches, and the upload service's absence; no server (the downloads over real sockets
are in test_xmpp_download.py, the whole round trip over Prosody in the integration tests)."""

from __future__ import annotations

import logging
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from pydantic import ValidationError
from slixmpp import JID
from slixmpp.stanza import Message

from chatbot.config.chat import XmppSection
from chatbot.transports.base import FilesNotSupported, IncomingMessage, MemoryStateStore
from chatbot.transports.files import FileFetchError, FileRefusedSource, OutgoingFile
from chatbot.transports.network import Setup
from chatbot.transports.xmpp import NETWORK, oob
from chatbot.transports.xmpp.download import (
    CheckedResolver,
    UploadHosts,
    address_problem,
    check_link,
)
from chatbot.transports.xmpp.stanzas import NS_REPLY, Parsed, RoomState, parse_message
from chatbot.transports.xmpp.transport import XmppSettings, XmppTransport
from chatbot.transports.xmpp.upload import NO_SERVICE, RECHECK_AFTER, Uploads

ROOM = "ops@conference.localhost"
OWNER = "owner@example.org"
URL = "https://upload.example.org/file_share/a1b2/screen%20shot.png"


class Ctx:
    own_jid = JID("bot@example.org/res")

    def room(self, room_jid: str) -> RoomState | None:
        if room_jid != ROOM:
            return None
        return RoomState(nick="bot", non_anonymous=True, occupants={"owner": OWNER})


def oob_xml(*urls: str) -> str:
    return "".join(f"<x xmlns='jabber:x:oob'><url>{u}</url></x>" for u in urls)


def direct(body: str | None, extra: str = "") -> str:
    body_xml = f"<body>{body}</body>" if body is not None else ""
    return (
        f"<message xmlns='jabber:client' from='{OWNER}/phone' to='bot@example.org' "
        f"type='chat' id='m1'>{body_xml}{extra}</message>"
    )


def parsed(xml: str) -> IncomingMessage:
    result = parse_message(Message(xml=ET.fromstring(xml)), Ctx())
    assert isinstance(result, Parsed), result
    assert isinstance(result.event, IncomingMessage)
    return result.event


# -- in: what a link announces ---------------------------------------------------


def test_a_link_that_is_the_whole_body_is_a_file_without_text() -> None:
    ev = parsed(direct(URL, oob_xml(URL)))
    assert ev.text == ""
    (file,) = ev.files
    assert file.name == "screen shot.png" and file.declared_type == "image/png"
    assert file.source == URL and not file.voice and file.declared_size is None


def test_the_rest_of_the_body_is_the_caption_in_a_room_too() -> None:
    xml = (
        f"<message xmlns='jabber:client' from='{ROOM}/owner' type='groupchat' id='c1'>"
        f"<body>the login page is broken\n{URL}</body>{oob_xml(URL)}"
        f"<stanza-id xmlns='urn:xmpp:sid:0' by='{ROOM}' id='sid1'/></message>"
    )
    ev = parsed(xml)
    assert ev.text == "the login page is broken"
    assert ev.envelope.sender is not None and ev.envelope.sender.id == OWNER
    assert [f.source for f in ev.files] == [URL]


def test_a_reply_with_a_picture_keeps_its_target_and_no_text() -> None:
    quote = "> bot:\n> which page?\n"
    extra = oob_xml(URL) + (
        f"<reply xmlns='{NS_REPLY}' id='bot-msg-7'/>"
        "<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'>"
        f"<body start='0' end='{len(quote)}'/></fallback>"
    )
    ev = parsed(direct(quote + URL, extra))
    assert ev.reply_to == "bot-msg-7" and ev.text == "" and len(ev.files) == 1


def test_a_link_without_a_body_is_still_a_file() -> None:
    ev = parsed(direct(None, oob_xml(URL)))
    assert ev.text == "" and len(ev.files) == 1


def test_a_message_without_a_link_has_no_files() -> None:
    assert parsed(direct(URL)).files == ()


@pytest.mark.parametrize(
    ("name", "kind"),
    [("voice.m4a", "audio/mp4"), ("note.opus", "audio/ogg"), ("rec.ogg", "audio/ogg")],
)
def test_audio_is_a_voice_note(name: str, kind: str) -> None:
    (file,) = parsed(direct("x", oob_xml(f"https://upload.example.org/v/{name}"))).files
    assert file.voice and file.declared_type == kind


def test_a_name_loses_control_characters_and_path_separators_and_is_bounded() -> None:
    # A right-to-left override would show "gpj.exe" as "exe.jpg"; %2F is a slash.
    assert oob.name_of("https://u.example.org/x/evil%E2%80%AEgpj.exe") == "evilgpj.exe"
    assert oob.name_of("https://u.example.org/x/..%2F..%2Fetc%2Fpasswd") == "....etcpasswd"
    assert oob.name_of("https://u.example.org/x/a%00b%0A.txt") == "ab.txt"
    assert len(oob.name_of("https://u.example.org/" + "a" * 500 + ".png")) == oob.MAX_NAME
    assert oob.name_of("https://u.example.org/") == ""


def test_links_are_bounded_and_not_repeated() -> None:
    urls = [f"https://upload.example.org/f/{i}.png" for i in range(15)]
    ev = parsed(direct("files", oob_xml(URL, URL, *urls, "https://x/" + "a" * 3000)))
    assert len(ev.files) == oob.MAX_FILES and ev.files[0].source == URL


async def test_the_transport_binds_each_files_fetch_to_the_safe_download() -> None:
    got = []

    async def handler(ev: object) -> None:
        got.append(ev)

    t = XmppTransport(
        XmppSettings(jid="bot@example.org", password="pw", file_domains=("example.org",)),
        MemoryStateStore(),
        handler=handler,
    )
    link = "http://127.0.0.1:9/file_share/x/shot.png"
    t._on_message(Message(xml=ET.fromstring(direct(link, oob_xml(link)))))
    await t._deliver(t._queue.get_nowait())
    (ev,) = got
    with pytest.raises(FileRefusedSource, match="127.0.0.1, a bare IP address"):
        await ev.files[0].fetch(1000)


async def test_an_unbound_fetch_says_so() -> None:
    with pytest.raises(FileFetchError, match="never bound"):
        await oob.incoming_file(URL).fetch(10)


# -- out ---------------------------------------------------------------------------


def test_a_file_message_is_the_link_alone_with_oob_and_a_reply_without_a_quote() -> None:
    msg = Message()
    oob.file_message(msg, URL, reply_to="t1", author="owner@example.org")
    assert msg["body"] == URL
    assert oob.links(msg) == [URL]
    reply = msg.xml.find(f"{{{NS_REPLY}}}reply")
    assert reply is not None and reply.get("id") == "t1"
    assert msg.xml.find("{urn:xmpp:fallback:0}fallback") is None


# -- which links are fetched -----------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.8.9.10",
        "::1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "fe80::1%eth0",
        "224.0.0.1",
        "ff02::1",
        "0.0.0.0",
        "::",
        "240.0.0.1",
        "fc00::1",
        "100.64.0.1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "2002:7f00:1::1",
    ],
)
def test_addresses_the_bot_never_fetches_from_by_default(address: str) -> None:
    assert address_problem(address) is not None


@pytest.mark.parametrize("address", ["8.8.8.8", "2001:4860:4860::8888", "::ffff:8.8.8.8"])
def test_public_addresses_pass(address: str) -> None:
    assert address_problem(address) is None


def test_default_hosts_are_the_domains_and_their_subdomains_only() -> None:
    hosts = UploadHosts.build([], ["example.org", "Other.NET."])
    for ok in (
        "https://example.org/f/a.png",
        "https://upload.example.org:5281/f/a.png",
        "http://share.other.net/f/a.png",
    ):
        check_link(ok, hosts)
    for bad, why in (
        ("https://notexample.org/a.png", "points to notexample.org"),
        ("https://example.org.evil.com/a.png", "points to example.org.evil.com"),
        ("https://203.0.113.5/a.png", "203.0.113.5, a bare IP address"),
        ("https://[::1]/a.png", "::1, a bare IP address"),
        ("ftp://upload.example.org/a.png", "not http or https"),
        ("aesgcm://upload.example.org/a.png#key", "not http or https"),
        ("https://me:pw@upload.example.org/a.png", "user name or password"),
    ):
        with pytest.raises(FileRefusedSource, match=why):
            check_link(bad, hosts)


def test_listed_hosts_replace_the_defaults_and_keep_their_port() -> None:
    hosts = UploadHosts.build(["files.internal:8080", "10.0.0.5", "[::1]:5281"], ["example.org"])
    check_link("http://files.internal:8080/a", hosts)
    check_link("http://10.0.0.5:1234/a", hosts)
    check_link("http://[::1]:5281/a", hosts)
    with pytest.raises(FileRefusedSource, match="allowed: 10.0.0.5, \\[::1\\]:5281, files"):
        check_link("http://files.internal:9090/a", hosts)
    with pytest.raises(FileRefusedSource):
        check_link("https://upload.example.org/a", hosts)


class FakeInner:
    def __init__(self, *addresses: str) -> None:
        self.addresses = addresses

    async def resolve(self, host: str, port: int, family: int) -> list[dict]:
        return [{"hostname": host, "host": a, "port": port} for a in self.addresses]

    async def close(self) -> None:
        pass


async def test_the_resolver_keeps_only_public_addresses_of_a_default_host() -> None:
    resolver = CheckedResolver(UploadHosts.build([], ["example.org"]))
    resolver._inner = FakeInner("10.0.0.7", "93.184.216.34", "::ffff:127.0.0.1")
    kept = await resolver.resolve("upload.example.org", 443)
    assert [r["host"] for r in kept] == ["93.184.216.34"]
    resolver._inner = FakeInner("127.0.0.1", "::1")
    with pytest.raises(FileRefusedSource, match=r"127.0.0.1 \(a loopback address\)"):
        await resolver.resolve("upload.example.org", 443)


async def test_the_resolver_trusts_a_listed_host_at_any_address() -> None:
    resolver = CheckedResolver(UploadHosts.build(["files.internal"], []))
    resolver._inner = FakeInner("10.0.0.7")
    assert [r["host"] for r in await resolver.resolve("files.internal", 80)] == ["10.0.0.7"]


def test_the_settings_take_the_owners_domains_and_the_listed_hosts() -> None:
    section = XmppSection(
        jid="bot@example.org",
        password_file=Path("pw"),
        upload_hosts=["upload.example.org:5281"],
    )
    setup = Setup(
        section=section,
        owners=("me@Example.ORG", "you@other.net"),
        secret=lambda _: "pw",
        state_dir=Path("."),
    )
    settings = NETWORK.settings(setup)
    assert settings.file_domains == ("example.org", "other.net")
    assert settings.upload_hosts == ("upload.example.org:5281",)
    assert XmppSection(jid="b@x.org", password_file=Path("p")).upload_hosts == []


@pytest.mark.parametrize("entry", ["https://upload.example.org", "a b", "x.org:99999", "-x.org"])
def test_a_bad_upload_host_is_refused_with_the_forms_it_may_take(entry: str) -> None:
    with pytest.raises(ValidationError, match="not a host or host:port"):
        XmppSection(jid="b@x.org", password_file=Path("p"), upload_hosts=[entry])


# -- no upload service -------------------------------------------------------------


class NoService:
    def __init__(self) -> None:
        self.asked = 0
        self.plugin = {"xep_0363": self}

    async def find_upload_service(self, **_: object) -> None:
        self.asked += 1
        return None


async def test_no_upload_service_is_files_not_supported_logged_once(caplog) -> None:
    client = NoService()
    now = [0.0]
    uploads = Uploads(lambda: client, timeout=1, clock=lambda: now[0])
    file = OutgoingFile("a.patch", "text/x-diff", b"diff")
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            with pytest.raises(FilesNotSupported, match="no file upload service"):
                await uploads.put(file)
        now[0] += RECHECK_AFTER + 1
        with pytest.raises(FilesNotSupported):
            await uploads.put(file)
    # Asked at first and again after a while, not at every file; told once.
    assert client.asked == 2
    assert [r.getMessage() for r in caplog.records].count(
        f"{NO_SERVICE}: the bot sends no files over XMPP"
    ) == 1
