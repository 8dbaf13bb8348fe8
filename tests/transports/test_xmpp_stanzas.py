"""What an incoming XMPP stanza means: ids, identity and filtering rules."""

from __future__ import annotations

from xml.etree import ElementTree as ET

import pytest
from slixmpp import JID
from slixmpp.stanza import Message

from chatbot.transports.base import Identity, IncomingEdit, IncomingMessage, Room
from chatbot.transports.xmpp.outgoing import add_reply, set_ids, set_reactions
from chatbot.transports.xmpp.stanzas import (
    Dropped,
    OwnReflection,
    Parsed,
    ReactionUpdate,
    RoomState,
    parse_message,
)

ROOM = "ops@conference.localhost"
HIDDEN = "ops@hidden.localhost"
OWNER = "owner@localhost"
STRANGER = "stranger@localhost"


class Ctx:
    own_jid = JID("bot@localhost/res")

    def __init__(self) -> None:
        self.rooms = {
            ROOM: RoomState(
                nick="bot",
                non_anonymous=True,
                occupants={"bot": "bot@localhost", "owner": OWNER, "other": STRANGER},
            ),
            HIDDEN: RoomState(
                nick="bot", non_anonymous=False, occupants={"bot": "bot@localhost", "owner": OWNER}
            ),
        }

    def room(self, room_jid: str) -> RoomState | None:
        return self.rooms.get(room_jid)


def msg(xml: str) -> Message:
    return Message(xml=ET.fromstring(xml))


def parse(xml: str, ctx: Ctx | None = None):
    return parse_message(msg(xml), ctx or Ctx())


def event(xml: str, ctx: Ctx | None = None):
    result = parse(xml, ctx)
    assert isinstance(result, Parsed), result
    return result.event


def test_direct_message_identity_is_the_bare_jid() -> None:
    ev = event(
        f"<message xmlns='jabber:client' from='{OWNER}/phone' to='bot@localhost' "
        "type='chat' id='m1'><body> /status </body></message>"
    )
    assert isinstance(ev, IncomingMessage)
    assert ev.envelope.sender == Identity("xmpp", OWNER)
    assert ev.envelope.chat == Identity("xmpp", OWNER)
    assert ev.envelope.is_direct and ev.text == "/status" and ev.envelope.message_id == "m1"


def test_room_message_uses_the_rooms_stanza_id_and_real_jid() -> None:
    result = parse(
        f"<message xmlns='jabber:client' from='{ROOM}/owner' type='groupchat' id='c1'>"
        "<body>hi</body>"
        f"<stanza-id xmlns='urn:xmpp:sid:0' by='{OWNER}' id='forged'/>"
        f"<stanza-id xmlns='urn:xmpp:sid:0' by='{ROOM}' id='room-sid'/></message>"
    )
    assert isinstance(result, Parsed)
    ev = result.event
    assert isinstance(ev, IncomingMessage)
    assert ev.envelope.message_id == "room-sid"
    assert ev.envelope.sender == Identity("xmpp", OWNER)
    assert ev.envelope.chat == Room("xmpp", ROOM) and not ev.envelope.is_direct
    assert result.dedupe_key == f"{ROOM}/room-sid"


def test_stanza_id_by_anyone_but_the_room_is_ignored() -> None:
    ev = event(
        f"<message xmlns='jabber:client' from='{ROOM}/owner' type='groupchat' id='c1'>"
        "<body>hi</body>"
        f"<stanza-id xmlns='urn:xmpp:sid:0' by='{OWNER}' id='forged'/></message>"
    )
    assert ev.envelope.message_id == "c1"


def test_nick_of_the_owner_taken_by_a_stranger_is_the_stranger() -> None:
    ctx = Ctx()
    # The room's presence said: nick "owner" is now stranger@localhost.
    ctx.rooms[ROOM].occupants["owner"] = STRANGER
    ev = event(
        f"<message xmlns='jabber:client' from='{ROOM}/owner' type='groupchat' id='x'>"
        "<body>/approve all</body></message>",
        ctx,
    )
    assert ev.envelope.sender == Identity("xmpp", STRANGER)
    assert ev.envelope.sender_name == "owner"


def test_unknown_occupant_has_no_identity() -> None:
    ev = event(
        f"<message xmlns='jabber:client' from='{ROOM}/ghost' type='groupchat' id='x'>"
        "<body>hi</body></message>"
    )
    assert ev.envelope.sender is None


def test_room_that_hides_real_jids_gives_no_identity_even_when_known() -> None:
    ev = event(
        f"<message xmlns='jabber:client' from='{HIDDEN}/owner' type='groupchat' id='x'>"
        "<body>hi</body></message>"
    )
    assert ev.envelope.sender is None


@pytest.mark.parametrize(
    "xml, reason",
    [
        (
            f"<message xmlns='jabber:client' from='{ROOM}/owner' type='groupchat' id='h'>"
            f"<body>old</body><delay xmlns='urn:xmpp:delay' from='{ROOM}' "
            "stamp='2020-01-01T00:00:00Z'/>"
            "</message>",
            "delayed",
        ),
        (
            f"<message xmlns='jabber:client' from='{OWNER}/x' type='chat' id='h'><body>old</body>"
            "<delay xmlns='urn:xmpp:delay' from='elsewhere' stamp='2020-01-01T00:00:00Z'/>"
            "</message>",
            "delayed",
        ),
        (
            f"<message xmlns='jabber:client' from='{ROOM}/bot' type='groupchat' id='h'>"
            "<body>me</body>"
            f"<delay xmlns='urn:xmpp:delay' from='{ROOM}' stamp='2020-01-01T00:00:00Z'/></message>",
            "own-history",
        ),
        (
            "<message xmlns='jabber:client' from='bot@localhost/other' type='chat' id='o'>"
            "<body>me</body></message>",
            "own",
        ),
        (
            f"<message xmlns='jabber:client' from='{OWNER}' type='chat' id='c'>"
            "<received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>"
            f"<message xmlns='jabber:client' from='{OWNER}/x' to='bot@localhost/y' "
            "type='chat' id='i'>"
            "<body>/approve</body></message></forwarded></received></message>",
            "forged-carbon",
        ),
        (
            "<message xmlns='jabber:client' from='bot@localhost' type='chat' id='c'>"
            "<sent xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>"
            f"<message xmlns='jabber:client' from='bot@localhost/y' to='{OWNER}' "
            "type='chat' id='i'>"
            "<body>answer</body></message></forwarded></sent></message>",
            "own-carbon",
        ),
        (
            f"<message xmlns='jabber:client' from='{ROOM}/owner' type='chat' id='p'>"
            "<body>private</body></message>",
            "muc-private",
        ),
        (
            f"<message xmlns='jabber:client' from='{ROOM}' type='groupchat' id='s'>"
            "<body>room says</body></message>",
            "room-service",
        ),
        (
            "<message xmlns='jabber:client' from='x@elsewhere/y' type='groupchat' id='s'>"
            "<body>hi</body></message>",
            "unknown-room",
        ),
        (
            f"<message xmlns='jabber:client' from='{OWNER}/x' type='headline' id='e'>"
            "<body>news</body></message>",
            "headline",
        ),
        (
            f"<message xmlns='jabber:client' from='{OWNER}/x' type='error' id='e'>"
            "<body>hi</body></message>",
            "error",
        ),
        (
            f"<message xmlns='jabber:client' from='{OWNER}/x' type='chat' id='e'>"
            "<active xmlns='http://jabber.org/protocol/chatstates'/></message>",
            "no-body",
        ),
    ],
)
def test_dropped(xml: str, reason: str) -> None:
    assert parse(xml) == Dropped(reason)


@pytest.mark.parametrize("stamped_by", ["localhost", "bot@localhost"])
def test_what_our_server_held_for_us_is_kept(stamped_by: str) -> None:
    # Offline storage stamps the domain; a resumed XEP-0198 session our bare JID.
    ev = event(
        f"<message xmlns='jabber:client' from='{OWNER}/x' type='chat' id='o1'>"
        "<body>sent while you were away</body>"
        f"<delay xmlns='urn:xmpp:delay' from='{stamped_by}' "
        "stamp='2020-01-01T00:00:00Z'/></message>"
    )
    assert isinstance(ev, IncomingMessage)


def test_carbon_from_our_own_account_is_unwrapped() -> None:
    ev = event(
        "<message xmlns='jabber:client' from='bot@localhost' type='chat' id='c'>"
        "<received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>"
        f"<message xmlns='jabber:client' from='{OWNER}/x' to='bot@localhost/y' "
        "type='chat' id='inner'><body>/status</body></message></forwarded></received>"
        "</message>"
    )
    assert ev.envelope.sender == Identity("xmpp", OWNER) and ev.envelope.message_id == "inner"


def test_correction_is_an_edit_not_a_message() -> None:
    ev = event(
        f"<message xmlns='jabber:client' from='{ROOM}/owner' type='groupchat' id='c2'>"
        "<body>/approve all</body>"
        "<replace xmlns='urn:xmpp:message-correct:0' id='c1'/></message>"
    )
    assert isinstance(ev, IncomingEdit)
    assert ev.target_id == "c1" and ev.text == "/approve all"


def test_own_reflection_reports_the_rooms_stanza_id() -> None:
    result = parse(
        f"<message xmlns='jabber:client' from='{ROOM}/bot' type='groupchat' "
        "id='mine'><body>x</body><origin-id xmlns='urn:xmpp:sid:0' id='mine'/>"
        f"<stanza-id xmlns='urn:xmpp:sid:0' by='{ROOM}' id='sid9'/></message>"
    )
    assert result == OwnReflection(ROOM, "mine", "mine", "sid9")


def test_reply_keeps_the_target_id_and_drops_the_quoted_fallback() -> None:
    m = Message(stype="groupchat")
    m["from"], m["type"] = JID(f"{ROOM}/owner"), "groupchat"
    m["body"] = "yes"
    set_ids(m, "r1")
    add_reply(m, "sid9", author=f"{ROOM}/bot", quote="Shall I /approve all?", quoted_nick="bot")
    assert m["body"].startswith("> bot:\n> Shall I")
    ev = parse_message(m, Ctx()).event
    assert isinstance(ev, IncomingMessage)
    assert ev.reply_to == "sid9" and ev.text == "yes"


def test_reaction_set_is_reported_whole_including_non_emoji() -> None:
    m = Message()
    m["from"], m["type"] = JID(f"{ROOM}/owner"), "groupchat"
    set_ids(m, "re1")
    set_reactions(m, "sid9", ["👍", "ok"])
    ev = parse_message(m, Ctx()).event
    assert isinstance(ev, ReactionUpdate)
    assert ev.keys == frozenset({"👍", "ok"}) and ev.target_id == "sid9"
    assert ev.envelope.sender == Identity("xmpp", OWNER) and ev.sender_key == OWNER


def test_reaction_in_hidden_room_keeps_a_diff_key_but_no_identity() -> None:
    m = Message()
    m["from"], m["type"] = JID(f"{HIDDEN}/owner"), "groupchat"
    set_ids(m, "re1")
    set_reactions(m, "sid9", ["👍"])
    ev = parse_message(m, Ctx()).event
    assert ev.envelope.sender is None and ev.sender_key == "nick:owner"
