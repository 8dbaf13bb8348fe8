"""Room membership over the real Prosody: a squatted nick, a room that refuses, rejoining."""

from __future__ import annotations

import asyncio
import logging

from chatbot.app.check import describe
from chatbot.transports.base import Identity, Outgoing, Room
from chatbot.transports.xmpp.probe import probe_xmpp

from .bot_process import occupant_arrival
from .conftest import WITHIN, unique, xmpp_settings


async def test_a_squatted_nick_recovers(xmpp_bot, xmpp_peer, xmpp_info, caplog) -> None:
    caplog.set_level(logging.INFO, logger="chatbot")
    room = xmpp_info["rooms"]["public"]
    squatter = await xmpp_peer("stranger")
    await squatter.join(room, "bot")  # the bot's nick, taken before it comes
    owner = await xmpp_peer("owner")
    await owner.join(room, "owner")

    # `chatbot check` says so, and that the bot can still join and post.
    report = await probe_xmpp(xmpp_settings(xmpp_info, rooms=(room,)), within=WITHIN)
    line = "\n".join(describe(report))
    assert "joined yes, can post yes" in line and "'bot' is taken" in line, line

    bot, inbox = await xmpp_bot(rooms=(room,))
    state = bot.rooms[room]
    assert state.joined and state.nick == "bot-2"
    assert "taken by another occupant" in caplog.text
    text = unique("posted-as-bot-2")
    await bot.send(Outgoing(Room("xmpp", room), text))
    got = await owner.expect_body(text)
    assert got["from"].resource == "bot-2"

    # The squatter leaves: the bot takes its nick back, and posts under it.
    # Armed before the leave: the owner may still list the squatter as 'bot'
    # when the leave is confirmed to the squatter (CI saw the bot post as bot-2).
    with occupant_arrival(owner, room, "bot") as bot_is_back:
        await squatter.leave(room)
        await asyncio.wait_for(bot_is_back, WITHIN)
    text = unique("posted-as-bot")
    await bot.send(Outgoing(Room("xmpp", room), text))
    got = await owner.expect_body(text)
    assert got["from"].resource == "bot" and bot.rooms[room].nick == "bot"
    # The nick change's own presence carries no "real JIDs visible" (status 100 is
    # sent on entering only): the owner is still known by their real JID.
    said = unique("after-the-nick-change")
    await owner.say(room, said, room=True)
    heard = await inbox.text(said)
    assert heard.envelope.sender == Identity("xmpp", owner.jid)


async def test_a_room_that_cannot_be_joined_is_tried_again(
    xmpp_bot, xmpp_peer, xmpp_info, caplog
) -> None:
    """Every nick taken: the bot keeps trying with back-off and gets in once one is free."""
    room = xmpp_info["rooms"]["public"]
    squatters = []
    for n, nick in enumerate(["bot", "bot-2", "bot-3", "bot-4"]):
        peer = await xmpp_peer("stranger" if n % 2 == 0 else "requester")
        await peer.join(room, nick)
        squatters.append(peer)
    bot, _ = await xmpp_bot(rooms=(room,), reconnect_initial=0.05, reconnect_max=0.2)
    assert not bot.rooms[room].joined
    assert "still cannot join" in caplog.text or "could not join" in caplog.text
    # Joined late, the transport tells its status listeners again (the outbox's wake-up).
    told = asyncio.Event()
    bot.on_status(lambda name, online: told.set())
    await squatters[3].leave(room)
    await asyncio.wait_for(told.wait(), WITHIN)
    assert bot.rooms[room].joined and bot.rooms[room].nick == "bot-4"
    owner = await xmpp_peer("owner")
    await owner.join(room, "owner")
    text = unique("late-join")
    await bot.send(Outgoing(Room("xmpp", room), text))
    await owner.expect_body(text)


async def test_a_second_session_of_the_bots_account_leaving_the_room_keeps_owners_known(
    xmpp_bot, xmpp_peer, xmpp_info
) -> None:
    """A restarted bot whose old session the server still holds (stream management keeps
    a dropped session for minutes) shares its nick with that ghost; when the ghost goes,
    the room tells the bot its own presence again, without "real JIDs visible". That is
    no change of the room's configuration: owners must still be recognised."""
    room = xmpp_info["rooms"]["public"]
    owner = await xmpp_peer("owner")
    await owner.join(room, "owner")
    bot, inbox = await xmpp_bot(rooms=(room,))
    assert bot.rooms[room].non_anonymous
    ghost = await xmpp_peer("bot")
    await ghost.join(room, bot.rooms[room].nick)  # the same account: one occupant, two sessions
    await ghost.leave(room)

    said = unique("after-the-ghost-left")
    await owner.say(room, said, room=True)
    heard = await inbox.text(said)
    assert heard.envelope.sender == Identity("xmpp", owner.jid)
    assert bot.rooms[room].non_anonymous
