"""The outbox over the real Prosody: rows wait while the server is away, go out once after."""

from __future__ import annotations

import asyncio

from chatbot.notify.outbox import OutboxSender
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


class _Crash(BaseException):
    """Stands for the process dying: nothing after it runs, nothing catches it."""


async def test_a_post_that_reached_the_room_just_before_a_crash_is_not_posted_again(
    xmpp_bot, xmpp_peer, xmpp_info, tmp_path
) -> None:
    room = xmpp_info["rooms"]["public"]
    store = await Store.open(tmp_path / "board.sqlite3")
    try:
        bot, _ = await xmpp_bot(TransportState(store), rooms=(room,))
        owner = await xmpp_peer("owner")
        await owner.join(room, "owner")
        real_send = bot.send

        async def send_then_die(*args, **kwargs):
            await real_send(*args, **kwargs)  # the room has it ...
            raise _Crash  # ... and we die before recording that

        bot.send = send_then_die
        text = unique("delivered-before-crash")
        row_id = await _enqueue(store, room, text)
        try:
            await OutboxSender(store, {"xmpp": bot}).flush()
        except _Crash:
            pass
        await owner.expect_body(text)
        row = await store.reader.fetchone(
            "SELECT state, send_started_at FROM outbox WHERE id = ?", (row_id,)
        )
        assert row["state"] == "pending" and row["send_started_at"] is not None

        bot.send = real_send  # "after the restart"
        sender = OutboxSender(store, {"xmpp": bot})
        await sender.flush()
        row = await store.reader.fetchone(
            "SELECT state, message_id FROM outbox WHERE id = ?", (row_id,)
        )
        assert row["state"] == "sent" and row["message_id"]
        assert sender.sent == 1  # recorded from the room's archive, not sent again
        marker = unique("marker")
        await _enqueue(store, room, marker)
        await sender.flush()
        await owner.expect_body(marker)
        seen = []
        while not owner.inbox.empty():
            seen.append(owner.inbox.get_nowait()["body"])
        assert text not in seen
        # A reply to the archived message still finds its row.
        assert await chat_store.posted(store.reader, "xmpp", row["message_id"]) is not None
    finally:
        await store.close()
