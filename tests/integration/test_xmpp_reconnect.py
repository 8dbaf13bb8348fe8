"""Prosody goes away and comes back while the bot runs."""

from __future__ import annotations

import asyncio
import time

from chatbot.store import Store
from chatbot.store.kv import TransportState
from chatbot.transports.base import Identity, IncomingMessage, IncomingReaction, Outgoing, Room

from .conftest import WITHIN, unique


async def test_bot_reconnects_and_rejoins_after_a_server_restart(
    servers, xmpp_bot, xmpp_peer, xmpp_info
) -> None:
    room = xmpp_info["rooms"]["public"]
    bot, inbox = await xmpp_bot()
    assert bot.sessions == 1

    await asyncio.to_thread(servers.stop_prosody)
    await asyncio.wait_for(bot.wait_offline(), WITHIN)
    t0 = time.monotonic()
    await asyncio.to_thread(servers.start_prosody)
    await asyncio.wait_for(bot.wait_online(), WITHIN)
    print(f"\nreconnected and rejoined {time.monotonic() - t0:.3f}s after Prosody was back")
    # The server lost every session: no resume, a fresh session with joins.
    assert bot.sessions == 2
    assert bot.rooms[room].non_anonymous

    owner = await xmpp_peer("owner")
    await owner.join(room, "owner")
    text = unique("after-restart")
    await owner.say(room, text, room=True)
    ev = await inbox.text(text)
    assert isinstance(ev, IncomingMessage) and ev.envelope.sender == Identity(
        "xmpp", "owner@localhost"
    )
    answer = unique("answer")
    await bot.send(Outgoing(ev.envelope.chat, answer))
    await owner.expect_body(answer)

    direct = unique("direct-after-restart")
    await owner.say("bot@localhost", direct)
    ev = await inbox.text(direct)
    await bot.send(Outgoing(ev.envelope.chat, answer + "-direct"))
    await owner.expect_body(answer + "-direct")


async def test_dropped_connection_is_resumed_with_stream_management(
    xmpp_bot, xmpp_peer, xmpp_info
) -> None:
    bot, inbox = await xmpp_bot()
    owner = await xmpp_peer("owner")
    # Cut the TCP connection under the bot; the server keeps the session (XEP-0198).
    bot.client.transport.abort()
    await asyncio.wait_for(bot.wait_offline(), WITHIN)
    text = unique("while-away")
    await owner.say("bot@localhost", text)  # held by the server for the resumed stream
    await asyncio.wait_for(bot.wait_online(), WITHIN)
    ev = await inbox.text(text)
    assert ev.envelope.sender == Identity("xmpp", "owner@localhost")
    assert bot.sessions == 1, "the session should have been resumed, not restarted"


async def test_bot_restart_keeps_reaction_state(xmpp_bot, xmpp_peer, xmpp_info, tmp_path) -> None:
    room = xmpp_info["rooms"]["public"]
    opened = await Store.open(tmp_path / "board.sqlite3")
    store = TransportState(opened)  # the bot's own store, as `chatbot run` wires it
    try:
        bot, inbox = await xmpp_bot(store)
        owner = await xmpp_peer("owner")
        await owner.join(room, "owner")
        target = await bot.send(Outgoing(Room("xmpp", room), unique("question")))
        await owner.react(room, target, {"👍"}, room=True)
        first = await inbox.get(lambda e: isinstance(e, IncomingReaction))
        assert first.added == {"👍"}
        await bot.stop()

        bot2, inbox2 = await xmpp_bot(store)
        await owner.react(room, target, {"👍", "🎉"}, room=True)
        second = await inbox2.get(lambda e: isinstance(e, IncomingReaction))
        # XEP-0444 sends the whole set; only the new key is news.
        assert second.added == {"🎉"} and not second.removed
        await bot2.stop()
    finally:
        await xmpp_bot.stop_all()  # nothing may write to the store once it is closed
        await opened.close()
