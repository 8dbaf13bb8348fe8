"""The outbox over the real Prosody: rows wait while the server is away, go out once after."""

from __future__ import annotations

import asyncio

from chatbot.outbox import OutboxSender
from chatbot.store import Store
from chatbot.store import chat as chat_store
from chatbot.store.kv import TransportState

from .conftest import WITHIN, unique


async def _enqueue(store: Store, room: str, text: str) -> int:
    async with store.transaction() as db:
        return await chat_store.enqueue(db, chat_store.Post("xmpp", room, text))


async def test_notification_queued_while_prosody_is_down_arrives_once(
    servers, xmpp_bot, xmpp_peer, xmpp_info, tmp_path
) -> None:
    room = xmpp_info["rooms"]["public"]
    store = await Store.open(tmp_path / "board.sqlite3")
    stop = asyncio.Event()
    try:
        bot, _ = await xmpp_bot(TransportState(store), rooms=(room,))
        sender = OutboxSender(store, {"xmpp": bot})
        running = asyncio.create_task(sender.run(stop))
        owner = await xmpp_peer("owner")
        await owner.join(room, "owner")
        before = unique("before")
        await _enqueue(store, room, before)
        sender.wake()
        await owner.expect_body(before)

        await asyncio.to_thread(servers.stop_prosody)
        await asyncio.wait_for(bot.wait_offline(), WITHIN)
        while_down = unique("while-down")
        row_id = await _enqueue(store, room, while_down)
        sender.wake()  # nothing can go: the row must wait, not fail
        pending = await chat_store.pending(store.reader, "xmpp")
        assert [r.id for r in pending] == [row_id]

        await asyncio.to_thread(servers.start_prosody)
        owner = await xmpp_peer("owner")
        # Ask for the room's recent history too: the bot may post before we are back in.
        await owner.join(room, "owner", history=20)
        await asyncio.wait_for(bot.wait_online(), WITHIN)
        await owner.expect_body(while_down, within=10)
        marker = unique("marker")
        await _enqueue(store, room, marker)
        sender.wake()
        await owner.expect_body(marker)
        # Everything the owner got up to the marker: the queued row exactly once.
        seen = []
        while not owner.inbox.empty():
            seen.append(owner.inbox.get_nowait()["body"])
        assert while_down not in seen  # it was consumed once above, never repeated
        rows = await store.reader.fetchall(
            "SELECT state, attempts, message_id FROM outbox WHERE id = ?", (row_id,)
        )
        assert rows[0]["state"] == "sent" and rows[0]["message_id"]
        posted = await chat_store.posted(store.reader, "xmpp", rows[0]["message_id"])
        assert posted is not None and posted.room == room
        stop.set()
        await running
    finally:
        stop.set()
        await store.close()
