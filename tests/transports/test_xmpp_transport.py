"""XmppTransport behaviour without a server: dedupe, reaction diffs, room state."""

from __future__ import annotations

import asyncio
from xml.etree import ElementTree as ET

import pytest
from slixmpp.stanza import Message, Presence

from chatbot.transports.base import (
    IncomingEvent,
    IncomingMessage,
    IncomingReaction,
    MemoryStateStore,
    NotConnected,
    Outgoing,
    Room,
    TransportError,
)
from chatbot.transports.xmpp.stanzas import RoomState
from chatbot.transports.xmpp.transport import XmppSettings, XmppTransport

ROOM = "ops@conference.localhost"


def make() -> tuple[XmppTransport, list[IncomingEvent], MemoryStateStore]:
    got: list[IncomingEvent] = []

    async def handler(ev: IncomingEvent) -> None:
        got.append(ev)

    store = MemoryStateStore()
    t = XmppTransport(
        XmppSettings(jid="bot@localhost", password="pw", rooms=(ROOM,)), store, handler=handler
    )
    t.rooms[ROOM] = RoomState(nick="bot", non_anonymous=True, joined=True)
    return t, got, store


async def feed(t: XmppTransport, xml: str) -> None:
    t._on_message(Message(xml=ET.fromstring(xml)))
    while not t._queue.empty():
        await t._deliver(t._queue.get_nowait())


def presence(xml: str) -> Presence:
    return Presence(xml=ET.fromstring(xml))


def occupant(nick: str, jid: str | None, kind: str = "", codes: tuple[int, ...] = ()) -> str:
    """An occupant's presence in ROOM; `codes` are its MUC status codes (110: our own)."""
    item = f"<item jid='{jid}/r' role='participant'/>" if jid else "<item role='participant'/>"
    typ = f" type='{kind}'" if kind else ""
    statuses = "".join(f"<status code='{code}'/>" for code in codes)
    return (
        f"<presence xmlns='jabber:client' from='{ROOM}/{nick}'{typ}>"
        f"<x xmlns='http://jabber.org/protocol/muc#user'>{item}{statuses}</x></presence>"
    )


def room_msg(nick: str, sid: str, body: str = "", extra: str = "") -> str:
    body_xml = f"<body>{body}</body>" if body else ""
    return (
        f"<message xmlns='jabber:client' from='{ROOM}/{nick}' type='groupchat' id='{sid}c'>"
        f"{body_xml}{extra}<stanza-id xmlns='urn:xmpp:sid:0' by='{ROOM}' id='{sid}'/>"
        "</message>"
    )


def test_settings_repr_hides_the_password() -> None:
    s = XmppSettings(jid="bot@localhost", password="hunter2")
    assert "hunter2" not in repr(s) and "jid='bot@localhost'" in repr(s)


async def test_identity_follows_room_presence_not_nick() -> None:
    t, got, _ = make()
    t._on_presence(presence(occupant("owner", "owner@localhost")))
    await feed(t, room_msg("owner", "s1", "one"))
    # The owner leaves; a stranger takes the nick.
    t._on_presence(presence(occupant("owner", "owner@localhost", "unavailable")))
    t._on_presence(presence(occupant("owner", "stranger@localhost")))
    await feed(t, room_msg("owner", "s2", "two"))
    assert [e.envelope.sender.id for e in got] == ["owner@localhost", "stranger@localhost"]


async def test_room_turning_semi_anonymous_stops_identities() -> None:
    t, got, _ = make()
    t._on_presence(presence(occupant("owner", "owner@localhost")))
    await feed(
        t,
        f"<message xmlns='jabber:client' from='{ROOM}' type='groupchat'>"
        "<x xmlns='http://jabber.org/protocol/muc#user'><status code='173'/></x>"
        "</message>",
    )
    await feed(t, room_msg("owner", "s1", "hi"))
    assert got[0].envelope.sender is None


async def test_same_stanza_twice_is_delivered_once() -> None:
    t, got, _ = make()
    await feed(t, room_msg("owner", "s1", "/go"))
    await feed(t, room_msg("owner", "s1", "/go"))
    assert len(got) == 1 and t.dropped["duplicate"] == 1


async def test_reaction_sets_become_added_and_removed_keys() -> None:
    t, got, store = make()
    t._on_presence(presence(occupant("owner", "owner@localhost")))

    def reactions(*keys: str) -> str:
        inner = "".join(f"<reaction>{k}</reaction>" for k in keys)
        return f"<reactions xmlns='urn:xmpp:reactions:0' id='target'>{inner}</reactions>"

    await feed(t, room_msg("owner", "r1", extra=reactions("👍")))
    await feed(t, room_msg("owner", "r2", extra=reactions("👍", "🎉")))
    await feed(t, room_msg("owner", "r3", extra=reactions("🎉")))
    await feed(t, room_msg("owner", "r4", extra=reactions("🎉")))  # no change: no event
    assert all(isinstance(e, IncomingReaction) for e in got)
    assert [(set(e.added), set(e.removed)) for e in got] == [
        ({"👍"}, set()),
        ({"🎉"}, set()),
        (set(), {"👍"}),
    ]
    assert got[0].target_id == "target"
    # The last set survives a restart: it is in the store.
    assert any(k.startswith("xmpp:reactions:") for k in store.values)


async def test_send_while_offline_raises_not_connected() -> None:
    t, _, _ = make()
    with pytest.raises(NotConnected):
        await t.send(Outgoing(Room("xmpp", ROOM), "x"))


async def test_message_text_is_cached_for_reply_fallbacks() -> None:
    t, got, _ = make()
    t._on_presence(presence(occupant("owner", "owner@localhost")))
    await feed(t, room_msg("owner", "s1", "what now?"))
    assert isinstance(got[0], IncomingMessage)
    assert t._recent["s1"] == (f"{ROOM}/owner", "owner", "what now?")


async def test_send_to_a_room_we_are_not_in_fails_at_once() -> None:
    t, _, _ = make()
    await t._set_online(True)
    t._conn = type("Conn", (), {"client": object()})()
    with pytest.raises(TransportError, match="not in room"):
        await t.send(Outgoing(Room("xmpp", "other@conference.localhost"), "x"))


async def test_a_bounce_fails_the_waiting_send_without_waiting_for_the_timeout() -> None:
    t, _, _ = make()
    fut = asyncio.get_running_loop().create_future()
    t._echoes["m1"] = fut
    t._on_message(
        Message(
            xml=ET.fromstring(
                f"<message xmlns='jabber:client' from='{ROOM}' type='error' id='m1'>"
                "<error type='cancel'><forbidden xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>"
                "</error></message>"
            )
        )
    )
    with pytest.raises(TransportError, match="forbidden"):
        await fut


async def test_a_message_right_behind_our_join_presence_already_has_its_identity() -> None:
    """Regression: the room's non-anonymity was learnt only when the join coroutine
    resumed, so an owner's command arriving right behind the join was a stranger's."""
    t, got, _ = make()
    t.rooms[ROOM] = RoomState(nick="bot", non_anonymous=False)  # as _join creates it
    t._on_presence(presence(occupant("owner", "owner@localhost")))
    t._on_presence(presence(occupant("bot", "bot@localhost", codes=(100, 110))))
    await feed(t, room_msg("owner", "s1", "/start x"))
    assert got[0].envelope.sender is not None and got[0].envelope.sender.id == "owner@localhost"


async def test_our_later_presence_without_status_100_keeps_real_jids_visible() -> None:
    """Regression (issue 39's flake): status 100 comes with the join only. Our presence
    after a nick change, or after another session of our account left, lacks it; taking
    that for "anonymous now" made every owner in the room a stranger."""
    t, got, _ = make()
    t._on_presence(presence(occupant("owner", "owner@localhost")))
    t._on_presence(presence(occupant("bot", "bot@localhost", codes=(110,))))
    await feed(t, room_msg("owner", "s1", "/start x"))
    assert got[0].envelope.sender is not None and got[0].envelope.sender.id == "owner@localhost"


async def test_archive_search_results_are_never_commands() -> None:
    t, got, _ = make()
    t._on_presence(presence(occupant("owner", "owner@localhost")))
    await feed(
        t,
        f"<message xmlns='jabber:client' from='{ROOM}' id='r1'>"
        "<result xmlns='urn:xmpp:mam:2' queryid='q' id='a1'>"
        "<forwarded xmlns='urn:xmpp:forward:0'>"
        f"<message xmlns='jabber:client' from='{ROOM}/owner' type='groupchat'><body>/start x</body></message>"
        "</forwarded></result></message>",
    )
    assert got == [] and t.dropped["archive"] == 1
