"""A stalled Prosody (SIGSTOP longer than the send timeout): a direct message arrives once.

The first send is not confirmed in time, but it sits in the server's socket
and is delivered when the server runs again. Sending it again blind is how it
arrived three times; the outbox asks the account's own archive (XEP-0313) by
origin-id instead, and while the archive cannot answer it does not resend.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal

from chatbot.notify.outbox import OutboxSender
from chatbot.store import Store
from chatbot.store import chat as chat_store
from chatbot.store.kv import TransportState
from chatbot.transports.base import Outgoing

from .conftest import WITHIN, unique


async def test_a_stalled_server_yields_exactly_one_copy_of_a_direct_message(
    servers, xmpp_bot, xmpp_peer, xmpp_info, tmp_path, caplog
) -> None:
    caplog.set_level(logging.WARNING, logger="chatbot")
    store = await Store.open(tmp_path / "board.sqlite3")
    stop = asyncio.Event()
    pid = xmpp_info["pid"]
    stopped = False
    running = None
    try:
        bot, inbox = await xmpp_bot(TransportState(store), rooms=(), send_timeout=1.0)
        owner = await xmpp_peer("owner")
        owner_jid = xmpp_info["accounts"]["owner"]["jid"]
        # The owner's presence must have reached the server before it stops, or the
        # message would find nobody to go to: a message from the owner comes after it.
        hello = unique("hello")
        await owner.say(bot.settings.jid, hello)
        await inbox.text(hello)
        sender = OutboxSender(store, {"xmpp": bot}, retry_initial=0.2, retry_max=0.5)
        text = unique("once-only")
        row_txn = [""]
        tries: list[str] = []
        second_try_over = asyncio.Event()
        delivered = asyncio.Event()  # a send went through, or the archive had it

        def watch(name, real):
            async def watched(*args, **kwargs):
                # send(message) or find_sent(target, txn_id, since)
                what = args[0].text if isinstance(args[0], Outgoing) else args[1]
                ours = what in (text, row_txn[0])  # the stalled row's send or archive lookup
                if ours:
                    tries.append(name)
                try:
                    result = await real(*args, **kwargs)
                    if ours and result is not None:
                        delivered.set()
                    return result
                finally:
                    if ours and len(tries) >= 2:
                        second_try_over.set()

            return watched

        bot.send = watch("send", bot.send)
        bot.find_sent = watch("find_sent", bot.find_sent)

        os.kill(pid, signal.SIGSTOP)
        stopped = True
        async with store.transaction() as db:
            row_id = await chat_store.enqueue(
                db, chat_store.Post("xmpp", owner_jid, text, target_kind="person")
            )
            row_txn[0] = (await db.fetchone("SELECT txn_id FROM outbox WHERE id = ?", (row_id,)))[0]
        running = asyncio.create_task(sender.run(stop))
        await asyncio.wait_for(second_try_over.wait(), WITHIN * 2)
        os.kill(pid, signal.SIGCONT)
        stopped = False

        await owner.expect_body(text, within=WITHIN)
        await asyncio.wait_for(delivered.wait(), WITHIN * 2)
        await sender.settled()
        row = await store.reader.fetchone("SELECT state FROM outbox WHERE id = ?", (row_id,))
        assert row["state"] == "sent"
        print(f"\ntries while stalled and after: {tries}")

        marker = unique("marker")
        async with store.transaction() as db:
            await chat_store.enqueue(
                db, chat_store.Post("xmpp", owner_jid, marker, target_kind="person")
            )
        sender.wake()
        await owner.expect_body(marker, within=WITHIN)
        seen = []
        while not owner.inbox.empty():
            seen.append(owner.inbox.get_nowait()["body"])
        assert text not in seen, f"a second copy arrived; tries: {tries}"
        assert tries.count("send") == 1, tries
        assert "direct chat with owner@localhost" in caplog.text
        assert "room owner@localhost" not in caplog.text
    finally:
        if stopped:
            os.kill(pid, signal.SIGCONT)
        stop.set()
        if running is not None:
            await running
        await store.close()
