"""MatrixTransport behaviour without Synapse: sync handling order, invites, 429."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from nio import AsyncClient, AsyncClientConfig, JoinResponse, LocalProtocolError, SyncResponse
from nio.responses import KeysQueryError
from nio.store import SqliteMemoryStore

from chatbot.transports.base import (
    IncomingEvent,
    IncomingMessage,
    IncomingReaction,
    MemoryStateStore,
    Outgoing,
    Room,
)
from chatbot.transports.matrix.session import MatrixClient
from chatbot.transports.matrix.transport import MatrixSettings, MatrixTransport, make_client

ME = "@bot:localhost"
OWNER = "@owner:localhost"
ROOM = "!r:localhost"
TOKEN_KEY = f"matrix:{ME}:next_batch"


class FakeClient:
    user_id = ME
    access_token = "t"

    def __init__(self) -> None:
        self.joined: list[str] = []

    async def join(self, room_id: str) -> JoinResponse:
        self.joined.append(room_id)
        return JoinResponse(room_id)


def make(**settings: Any) -> tuple[MatrixTransport, list[IncomingEvent], MemoryStateStore]:
    got: list[IncomingEvent] = []
    store = MemoryStateStore()

    async def handler(ev: IncomingEvent) -> None:
        # What a handler sees: the batch it is in is not yet marked as done.
        got.append((ev, store.values.get(TOKEN_KEY)))

    t = MatrixTransport(
        MatrixSettings(
            homeserver="http://unused", user_id=ME, password="pw", owners=(OWNER,), **settings
        ),
        store,
        handler=handler,
    )
    t.client = FakeClient()
    return t, got, store


def text(event_id: str, body: str, sender: str = OWNER) -> dict[str, Any]:
    return {
        "type": "m.room.message",
        "sender": sender,
        "event_id": event_id,
        "origin_server_ts": 1,
        "content": {"msgtype": "m.text", "body": body},
    }


def sync(
    next_batch: str,
    events: list[dict[str, Any]] | None = None,
    invites: dict[str, str] | None = None,
    *,
    direct: bool = False,
) -> SyncResponse:
    rooms: dict[str, Any] = {"join": {}, "invite": {}}
    if events is not None:
        rooms["join"][ROOM] = {
            "timeline": {"events": events, "limited": False, "prev_batch": "p"},
            "state": {"events": []},
        }
    for room_id, inviter in (invites or {}).items():
        content = {"membership": "invite", **({"is_direct": True} if direct else {})}
        rooms["invite"][room_id] = {
            "invite_state": {
                "events": [
                    {
                        "type": "m.room.member",
                        "sender": inviter,
                        "state_key": ME,
                        "content": content,
                    }
                ]
            }
        }
    resp = SyncResponse.from_dict({"next_batch": next_batch, "rooms": rooms})
    assert isinstance(resp, SyncResponse), resp
    return resp


def test_settings_repr_hides_secrets() -> None:
    s = MatrixSettings(homeserver="h", user_id=ME, password="pw1", access_token="tok1")
    assert "pw1" not in repr(s) and "tok1" not in repr(s)


async def test_token_is_saved_only_after_the_handlers_ran() -> None:
    t, got, store = make()
    await t._on_sync(sync("s1", [text("$1", "a"), text("$2", "b")]))
    assert [(e.text, token) for e, token in got] == [("a", None), ("b", None)]
    assert store.values[TOKEN_KEY] == "s1"
    await t._on_sync(sync("s2", [text("$3", "c")]))
    assert got[-1][1] == "s1" and store.values[TOKEN_KEY] == "s2"


async def test_a_replayed_batch_is_not_executed_twice() -> None:
    t, got, _ = make()
    batch = [text("$1", "a")]
    await t._on_sync(sync("s1", batch))
    await t._on_sync(sync("s1", batch))  # e.g. after a crash before the token was saved
    assert len(got) == 1 and t.dropped["duplicate"] == 1


async def test_invites_are_accepted_only_from_owners() -> None:
    t, _, store = make()
    await t._on_sync(
        sync("s1", invites={"!a:l": "@stranger:localhost", "!b:l": OWNER}, direct=True)
    )
    assert t.client.joined == ["!b:l"]
    assert t.dropped["invite-not-owner"] == 1
    assert store.values[f"matrix:{ME}:dm:{OWNER}"] == "!b:l"


async def test_reaction_and_its_redaction() -> None:
    t, got, _ = make()
    reaction = {
        "type": "m.reaction",
        "sender": OWNER,
        "event_id": "$re",
        "origin_server_ts": 1,
        "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$q", "key": "👍"}},
    }
    redaction = {
        "type": "m.room.redaction",
        "sender": OWNER,
        "event_id": "$red",
        "origin_server_ts": 2,
        "redacts": "$re",
        "content": {"redacts": "$re"},
    }
    await t._on_sync(sync("s1", [reaction]))
    await t._on_sync(sync("s2", [redaction]))
    added, removed = got[0][0], got[1][0]
    assert isinstance(added, IncomingReaction) and added.added == {"👍"}
    assert isinstance(removed, IncomingReaction) and removed.removed == {"👍"}
    assert added.target_id == removed.target_id == "$q"


async def test_backlog_of_a_newly_joined_room_is_not_delivered() -> None:
    t, got, _ = make()
    join = {
        "type": "m.room.member",
        "sender": ME,
        "state_key": ME,
        "event_id": "$j",
        "origin_server_ts": 1,
        "content": {"membership": "join"},
    }
    await t._on_sync(sync("s1", [text("$old", "old command"), join, text("$new", "new")]))
    assert [e.text for e, _ in got] == ["new"]
    assert isinstance(got[0][0], IncomingMessage)


async def test_rate_limited_send_is_waited_out_with_the_same_txn_id() -> None:
    seen: list[str] = []

    async def send(request: web.Request) -> web.Response:
        seen.append(request.match_info["txn"])
        if len(seen) == 1:
            return web.json_response(
                {"errcode": "M_LIMIT_EXCEEDED", "error": "slow down", "retry_after_ms": 30},
                status=429,
            )
        return web.json_response({"event_id": "$sent"})

    app = web.Application()
    app.router.add_put("/_matrix/client/v3/rooms/{room}/send/{type}/{txn}", send)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        settings = MatrixSettings(homeserver=f"http://127.0.0.1:{port}", user_id=ME)
        t = MatrixTransport(settings, MemoryStateStore())
        t.client = make_client(settings)
        t.client.restore_login(ME, "DEV", "token")
        event_id = await t.send(Outgoing(Room("matrix", ROOM), "hello", txn_id="outbox-42"))
        await t.client.close()
    finally:
        await runner.cleanup()
    assert event_id == "$sent"
    assert seen == ["outbox-42", "outbox-42"]


async def test_what_the_first_sync_brings_is_marked_late_and_the_rest_live() -> None:
    t, got, _ = make()
    await t._on_sync(sync("s1", [text("$1", "while away")]))
    await t._on_sync(sync("s2", [text("$2", "live")]))
    assert [(e.text, e.envelope.at) for e, _ in got] == [("while away", 0.001), ("live", None)]


async def test_strangers_leave_no_rows_in_the_store() -> None:
    t, got, store = make()
    t.keep_state_for(lambda sender: sender is not None and sender.id == OWNER)
    reaction = {
        "type": "m.reaction",
        "sender": "@stranger:localhost",
        "event_id": "$r1",
        "origin_server_ts": 1,
        "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$x", "key": "👍"}},
    }
    stranger_text = text("$2", "/start x", sender="@stranger:localhost")
    await t._on_sync(sync("s1", [reaction, stranger_text, text("$3", "/status")]))
    await t._on_sync(sync("s2", [stranger_text]))  # a replay is still caught, in memory
    assert [e.envelope.message_id for e, _ in got] == ["$r1", "$2", "$3"]
    assert store.processed == {("matrix", "$3"): None}
    assert not any(":reaction:" in key for key in store.values)


async def test_a_key_query_another_task_made_already_is_no_error(monkeypatch) -> None:
    """nio's sync loop and the bot (before it shares a room key) both query keys when a
    device list changed; the second finds nothing left to ask. nio raises then, which
    would end the sync loop's round and take the transport offline for a back-off."""
    config = AsyncClientConfig(store=SqliteMemoryStore, encryption_enabled=True)
    client = MatrixClient("http://127.0.0.1:9", "@bot:example.org", config=config)
    client.restore_login("@bot:example.org", "BOTDEVICE", "token")
    try:
        assert not client.should_query_keys
        with pytest.raises(LocalProtocolError):
            await AsyncClient.keys_query(client)  # nio's own
        answer = await client.keys_query()
        assert isinstance(answer, KeysQueryError)
        # With a device list to ask about, it is nio's query that asks.
        asked = []

        async def nio_query(self) -> str:
            asked.append(set(self.users_for_key_query))
            return "asked"

        monkeypatch.setattr(AsyncClient, "keys_query", nio_query)
        client.olm.users_for_key_query.add("@owner:example.org")
        assert await client.keys_query() == "asked"
        assert asked == [{"@owner:example.org"}]
    finally:
        await client.close()
