"""Archived XMPP messages (XEP-0313) and what the bot sends: the same trust rules, bounded size."""

from __future__ import annotations

from datetime import UTC, datetime
from xml.etree import ElementTree as ET

from slixmpp import JID
from slixmpp.stanza import Message

from chatbot.transports.base import Identity, IncomingMessage, MemoryStateStore
from chatbot.transports.xmpp.archive import Archives, Mark, parse_archived
from chatbot.transports.xmpp.outgoing import add_reply, excerpt, fit, set_ids, xml_safe
from chatbot.transports.xmpp.stanzas import Dropped, Parsed, RoomState
from chatbot.transports.xmpp.transport import XmppSettings, XmppTransport

ROOM = "ops@conference.localhost"
HIDDEN = "ops@hidden.localhost"
OWN = "bot@localhost"
OWNER = "owner@localhost"
MUC_USER = "http://jabber.org/protocol/muc#user"


class Ctx:
    own_jid = JID(f"{OWN}/res")

    def __init__(self) -> None:
        self.rooms = {
            ROOM: RoomState(nick="bot", non_anonymous=True, joined=True),
            HIDDEN: RoomState(nick="bot", non_anonymous=False, joined=True),
        }

    def room(self, room_jid: str) -> RoomState | None:
        return self.rooms.get(room_jid)


def result(
    inner: str, *, archive_id: str = "a1", frm: str = "", stamp: str = "", query: str = "q1"
) -> Message:
    stamp = stamp or "2026-12-01T10:00:00Z"
    sender = f" from='{frm}'" if frm else ""
    return Message(
        xml=ET.fromstring(
            f"<message xmlns='jabber:client' to='{OWN}/res'{sender}>"
            f"<result xmlns='urn:xmpp:mam:2' queryid='{query}' id='{archive_id}'>"
            "<forwarded xmlns='urn:xmpp:forward:0'>"
            f"<delay xmlns='urn:xmpp:delay' stamp='{stamp}'/>{inner}"
            "</forwarded></result></message>"
        )
    )


def item(jid: str) -> str:
    return f"<x xmlns='{MUC_USER}'><item jid='{jid}'/></x>"


def room_inner(nick: str, body: str, extra: str = "") -> str:
    return (
        f"<message xmlns='jabber:client' from='{ROOM}/{nick}' type='groupchat' id='c1'>"
        f"<body>{body}</body>{extra}</message>"
    )


def test_an_archived_room_message_is_from_the_last_item_the_room_added() -> None:
    # The sender wrote an item naming the owner; the room appended its own after it.
    forged = room_inner("mallory", "/start x", item(OWNER) + item("stranger@localhost"))
    parsed = parse_archived(result(forged, frm=ROOM), ROOM, Ctx())
    assert isinstance(parsed, Parsed)
    ev = parsed.event
    assert isinstance(ev, IncomingMessage)
    assert ev.envelope.sender == Identity("xmpp", "stranger@localhost")
    assert ev.envelope.message_id == "a1" and parsed.dedupe_key == f"{ROOM}/a1"
    assert parsed.archived == (ROOM, "a1")
    # The archive's time, so that the chat layer can judge the command's age.
    assert ev.envelope.at == datetime(2026, 12, 1, 10, tzinfo=UTC).timestamp()


def test_an_archived_owner_command_keeps_the_owner() -> None:
    parsed = parse_archived(result(room_inner("owner", "/status", item(OWNER))), ROOM, Ctx())
    assert parsed.event.envelope.sender == Identity("xmpp", OWNER)


def test_archived_messages_of_a_room_that_hides_jids_have_no_sender() -> None:
    inner = room_inner("owner", "/status", item(OWNER)).replace(ROOM, HIDDEN)
    parsed = parse_archived(result(inner), HIDDEN, Ctx())
    assert parsed.event.envelope.sender is None


def test_our_own_archived_posts_are_not_events() -> None:
    ours = parse_archived(result(room_inner("board-old", "hello", item(OWN))), ROOM, Ctx())
    assert isinstance(ours, Dropped)
    by_nick = parse_archived(result(room_inner("bot", "hello")), ROOM, Ctx())
    assert isinstance(by_nick, Dropped)


def test_a_direct_message_from_our_archive_counts_and_a_forged_stanza_id_is_dropped() -> None:
    inner = (
        f"<message xmlns='jabber:client' from='{OWNER}/phone' to='{OWN}' type='chat' id='m1'>"
        f"<body>/status</body><stanza-id xmlns='urn:xmpp:sid:0' by='{OWN}' id='forged'/>"
        "</message>"
    )
    parsed = parse_archived(result(inner, archive_id="own-7"), OWN, Ctx())
    assert isinstance(parsed, Parsed)
    assert (
        parsed.event.envelope.sender == Identity("xmpp", OWNER) and parsed.event.envelope.is_direct
    )
    assert parsed.dedupe_key == f"{OWN}/own-7" and parsed.archived == (OWN, "own-7")


def test_a_room_message_found_in_our_own_archive_is_not_a_command() -> None:
    assert isinstance(parse_archived(result(room_inner("owner", "/x")), OWN, Ctx()), Dropped)


def test_results_are_taken_only_from_the_archive_asked() -> None:
    archives = Archives(lambda: None, OWN, 1.0)
    collected: list[Message] = []
    archives._open["q1"] = (ROOM, collected)
    assert archives.take(result(room_inner("owner", "/x"), frm="mallory@localhost"))
    assert archives.take(result(room_inner("owner", "/x"), frm=ROOM))
    assert len(collected) == 1
    # A result for no open query is swallowed too: never a live command.
    assert archives.take(result(room_inner("owner", "/x"), frm=ROOM, query="q9"))
    assert len(collected) == 1


def test_a_mark_survives_its_text_form() -> None:
    mark = Mark("abc", 12.5)
    assert Mark.load(mark.dump()) == mark
    assert Mark.load(None) is None and Mark.load("not json") is None


async def test_live_stanzas_wait_behind_what_the_archive_returns() -> None:
    got = []

    async def handler(ev):
        got.append(ev.text)

    t = XmppTransport(XmppSettings(jid=OWN, password="pw"), MemoryStateStore(), handler=handler)
    t.rooms[ROOM] = RoomState(nick="bot", non_anonymous=True, joined=True)
    t.catch_up.hold("session")
    live = Message(
        xml=ET.fromstring(
            f"<message xmlns='jabber:client' from='{OWNER}/phone' to='{OWN}' type='chat' "
            "id='live'><body>new</body></message>"
        )
    )
    t._on_message(live)
    assert t._queue.empty()  # held while the archive is read
    archived = parse_archived(result(room_inner("owner", "old", item(OWNER)), frm=ROOM), ROOM, t)
    t.catch_up._caught_up.append(archived)
    t.catch_up.release("session")
    while not t._queue.empty():
        await t._deliver(t._queue.get_nowait())
    assert got == ["old", "new"]


def test_a_reply_quotes_one_short_line_however_long_its_target() -> None:
    m = Message()
    m["body"] = "Refused."
    add_reply(m, "t1", quote="line one\n" * 50_000, quoted_nick="mallory")
    assert len(m["body"]) < 200
    assert m["body"].startswith("> mallory:\n> line one line one")
    assert m["body"].endswith("Refused.")


def test_text_xml_cannot_carry_is_removed() -> None:
    assert xml_safe("a\x1bb\x00c\x07d\ttab\nline") == "abcd\ttab\nline"
    assert excerpt("\x1b[31mred") == "[31mred"


def test_a_stanza_is_cut_to_the_limit_counting_escapes_and_utf8() -> None:
    m = Message()
    m["to"] = JID(ROOM)
    set_ids(m, "x1")
    m["body"] = "<" * 5_000 + "😀" * 5_000
    assert fit(m, 10_000)
    assert len(str(m).encode()) <= 10_000 and m["body"].endswith("…")
    small = Message()
    small["body"] = "short"
    assert not fit(small, 10_000) and small["body"] == "short"
