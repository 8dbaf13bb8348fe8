"""A replayed event runs its handler once: the XMPP and Matrix transports wired to the
real store (`TransportState`, as `chatbot run` wires them), on both engines, also
when the replay comes after a restart (a new transport over the reopened database).

The events are fed the way the network would deliver them (a stanza, a sync batch);
no server is needed to show the guard, the real servers' restarts are in
tests/integration/test_xmpp_reconnect.py and test_matrix_restart.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from chatbot.store import Store
from chatbot.store.kv import TransportState
from chatbot.transports.base import IncomingEvent, IncomingMessage
from chatbot.transports.matrix.transport import MatrixSettings, MatrixTransport
from chatbot.transports.xmpp.stanzas import RoomState
from chatbot.transports.xmpp.transport import XmppSettings, XmppTransport
from tests.transports.test_matrix_transport import ME, OWNER, FakeClient, sync, text
from tests.transports.test_xmpp_transport import ROOM, feed, occupant, presence, room_msg


@asynccontextmanager
async def opened(database) -> AsyncIterator[TransportState]:
    store = await Store.open(database.value, password_file=database.password_file)
    try:
        yield TransportState(store)
    finally:
        await store.close()


def collector() -> tuple[list[str], Callable]:
    texts: list[str] = []

    async def handler(event: IncomingEvent) -> None:
        assert isinstance(event, IncomingMessage)
        texts.append(event.text)

    return texts, handler


def xmpp(state: TransportState, handler: Callable) -> XmppTransport:
    transport = XmppTransport(
        XmppSettings(jid="bot@localhost", password="pw", rooms=(ROOM,)), state, handler=handler
    )
    transport.rooms[ROOM] = RoomState(nick="bot", non_anonymous=True, joined=True)
    transport._on_presence(presence(occupant("owner", "owner@localhost")))
    return transport


def matrix(state: TransportState, handler: Callable) -> MatrixTransport:
    settings = MatrixSettings(
        homeserver="http://unused", user_id=ME, password="pw", owners=(OWNER,)
    )
    transport = MatrixTransport(settings, state, handler=handler)
    transport.client = FakeClient()
    return transport


async def test_a_replayed_stanza_runs_the_handler_once(database) -> None:
    texts, handler = collector()
    async with opened(database) as state:
        transport = xmpp(state, handler)
        await feed(transport, room_msg("owner", "s1", "/start report"))
        await feed(transport, room_msg("owner", "s1", "/start report"))  # the archive, again
        assert texts == ["/start report"]
        assert transport.dropped["duplicate"] == 1

    # A restart: the archive is read back from before the bot went down.
    async with opened(database) as state:
        transport = xmpp(state, handler)
        await feed(transport, room_msg("owner", "s1", "/start report"))
        await feed(transport, room_msg("owner", "s2", "/status"))
        assert texts == ["/start report", "/status"]
        assert transport.dropped["duplicate"] == 1


async def test_a_replayed_sync_batch_runs_the_handler_once(database) -> None:
    texts, handler = collector()
    batch = [text("$1", "/start report")]
    async with opened(database) as state:
        transport = matrix(state, handler)
        await transport._on_sync(sync("s1", batch))
        await transport._on_sync(sync("s1", batch))  # a crash before the token was saved
        assert texts == ["/start report"]

    async with opened(database) as state:
        transport = matrix(state, handler)
        await transport._on_sync(sync("s1", [*batch, text("$2", "/status")]))
        assert texts == ["/start report", "/status"]
        assert transport.dropped["duplicate"] == 1
