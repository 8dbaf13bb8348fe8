"""Long messages over the real Prosody: no reply grows with its input, no stanza costs the stream.

Prosody closes a client's stream over a stanza larger than 256 KiB. A refusal
that quoted a 200 KB multi-line message whole was such a stanza: the bot was
disconnected, the outbox sent the same row after every reconnect, and every
other post waited behind it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from chatbot.notify.outbox import OutboxSender
from chatbot.store import Store
from chatbot.store import chat as chat_store
from chatbot.store.kv import TransportState
from chatbot.transports.base import NotConnected, TargetUnavailable

from .conftest import WITHIN, unique
from .e2e import start_bot

INTENT = "# Reporting\n\nBuild the monthly report.\n"
# 50,000 short lines: 200 KB, and each line quoted with "> " would make 300 KB.
LONG = "abc\n" * 50_000


async def test_a_200_kb_message_leaves_the_bot_connected_and_status_answered(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    bot, room = await start_bot(tmp_path, servers.info, [], {"report": INTENT}, xmpp_peer)
    try:
        stranger = await xmpp_peer("stranger")
        await stranger.join(room.room, "mallory")
        attack = await stranger.say(room.room, "/start report\n" + LONG, room=True)
        refusal = await room.bot_replies_to(attack)
        assert "may not" in refusal["body"]
        assert len(refusal["body"]) < 400, "the refusal quoted the message back"
        # An owner pasting a long text is told so, the same way.
        pasted = await room.say("/draft " + LONG)
        too_long = await room.bot_replies_to(pasted)
        assert "too long" in too_long["body"] and len(too_long["body"]) < 400
        asked = await room.say("/status")
        status = await room.bot_replies_to(asked)
        assert "1 card\n" in status["body"]
        await bot.stop()
        disconnects = bot.log_text().count("XMPP connection lost")
        print(f"\ndisconnects during the 200 KB test: {disconnects}")
        assert disconnects == 0
        rows = bot.query("SELECT state FROM outbox")
        assert {r["state"] for r in rows} == {"sent"}
    finally:
        await bot.stop()


async def _enqueue(store: Store, room: str, text: str) -> int:
    async with store.transaction() as db:
        return await chat_store.enqueue(db, chat_store.Post("xmpp", room, text))


async def test_a_post_over_the_stanza_limit_is_cut_to_fit_and_sent_once(
    xmpp_bot, xmpp_peer, xmpp_info, tmp_path
) -> None:
    room = xmpp_info["rooms"]["public"]
    store = await Store.open(tmp_path / "board.sqlite3")
    try:
        bot, _ = await xmpp_bot(TransportState(store), rooms=(room,))
        owner = await xmpp_peer("owner")
        await owner.join(room, "owner")
        # Escaping makes each "<" four bytes: 100,000 characters, 400 KB on the wire.
        head = unique("huge")
        await _enqueue(store, room, head + " " + "<" * 100_000)
        await OutboxSender(store, {"xmpp": bot}).flush()
        got = await owner.expect(lambda m: m["body"].startswith(head))
        assert got["body"].endswith("…") and len(str(got).encode()) < 12_000
        assert bot.sessions == 1 and bot.online
    finally:
        await store.close()


async def test_a_post_that_kills_the_stream_fails_alone_after_bounded_tries(
    xmpp_bot, xmpp_peer, xmpp_info, tmp_path
) -> None:
    """A limit set above the server's: the row costs the stream each try, then is given up."""
    room = xmpp_info["rooms"]["public"]
    store = await Store.open(tmp_path / "board.sqlite3")
    stop = asyncio.Event()
    try:
        bot, _ = await xmpp_bot(
            TransportState(store), rooms=(room,), max_stanza_bytes=1_000_000, send_timeout=3
        )
        owner = await xmpp_peer("owner")
        await owner.join(room, "owner", history=5)
        tries = 2
        sender = OutboxSender(store, {"xmpp": bot}, retry_initial=0.05, max_tries=tries)
        poison = await _enqueue(store, room, "x" * 300_000)
        poison_row = await chat_store.row(store.reader, poison)
        assert poison_row is not None
        after = unique("after-the-poison")
        await _enqueue(store, room, after)
        # A try of the poison row fails in its send, or (from the second try on, the row
        # having been handed over once) in asking the archive whether the server got it:
        # not knowing is a failed try without a send. Both count, as the sender counts.
        failed_tries: list[str] = []
        gave_up = asyncio.Event()

        def count_failure(where: str, error: Exception) -> None:
            if isinstance(error, (NotConnected, TargetUnavailable)):
                return  # the row waits for the server: the sender does not count a try
            failed_tries.append(f"{where}: {type(error).__name__}")
            if len(failed_tries) == tries:
                gave_up.set()

        real_send, real_find_sent = bot.send, bot.find_sent

        async def counting_send(message):
            try:
                return await real_send(message)
            except Exception as error:
                if message.txn_id == poison_row.txn_id:
                    count_failure("send", error)
                raise

        async def counting_find_sent(target, txn_id, since):
            try:
                return await real_find_sent(target, txn_id, since)
            except Exception as error:
                if txn_id == poison_row.txn_id:
                    count_failure("archive", error)
                raise

        bot.send, bot.find_sent = counting_send, counting_find_sent
        running = asyncio.create_task(sender.run(stop))
        await owner.expect_body(after, within=WITHIN * 4)
        try:
            await asyncio.wait_for(gave_up.wait(), WITHIN * 4)
        except TimeoutError:
            raise AssertionError(f"the poison row's failed tries so far: {failed_tries}") from None
        await sender.settled()
        row = await store.reader.fetchone(
            "SELECT state, attempts, last_error FROM outbox WHERE id = ?", (poison,)
        )
        assert row["state"] == "failed" and row["attempts"] == tries
        assert row["last_error"]
        print(
            f"\nfresh sessions: {bot.sessions} for {tries} tries of the poison row: {failed_tries}"
        )
        assert bot.sessions <= 1 + tries
        await asyncio.wait_for(bot.wait_online(), WITHIN)
        marker = unique("still-flowing")
        await _enqueue(store, room, marker)
        sender.wake()
        await owner.expect_body(marker)
        stop.set()
        await running
    finally:
        stop.set()
        await store.close()
