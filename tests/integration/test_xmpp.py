"""XMPP transport against the real Prosody, with a real slixmpp owner client."""

from __future__ import annotations

from typing import Any

from chatbot.transports.base import (
    Identity,
    IncomingEdit,
    IncomingMessage,
    IncomingReaction,
    Outgoing,
    Room,
)
from chatbot.transports.xmpp.probe import probe_xmpp
from chatbot.transports.xmpp.stanzas import NS_REACTIONS, NS_REPLY, trusted_stanza_id

from .conftest import unique, xmpp_settings


def reactions_of(msg: Any) -> tuple[str | None, set[str]]:
    el = msg.xml.find(f"{{{NS_REACTIONS}}}reactions")
    if el is None:
        return None, set()
    return el.get("id"), {r.text for r in el}


def reply_target(msg: Any) -> str | None:
    el = msg.xml.find(f"{{{NS_REPLY}}}reply")
    return el.get("id") if el is not None else None


async def test_direct_message_round_trip(xmpp_bot, xmpp_peer, xmpp_info) -> None:
    bot, inbox = await xmpp_bot()
    owner = await xmpp_peer("owner")
    text = unique("status")
    sent_id = await owner.say("bot@localhost", text)

    ev = await inbox.text(text)
    assert isinstance(ev, IncomingMessage)
    assert ev.envelope.sender == Identity("xmpp", "owner@localhost")
    assert ev.envelope.is_direct and ev.envelope.chat == Identity("xmpp", "owner@localhost")
    assert ev.envelope.message_id == sent_id

    answer = unique("answer")
    answer_id = await bot.send(Outgoing(ev.envelope.chat, answer, reply_to=ev.envelope.message_id))
    got = await owner.expect_body(answer)
    assert got["id"] == answer_id
    assert reply_target(got) == sent_id

    # Reaction and reply from the owner on the bot's direct message.
    await owner.react("bot@localhost", answer_id, {"👍"})
    reaction = await inbox.get(lambda e: isinstance(e, IncomingReaction))
    assert reaction.target_id == answer_id and reaction.added == {"👍"}
    assert reaction.envelope.sender == Identity("xmpp", "owner@localhost")


async def test_room_message_reply_and_reactions_both_ways(xmpp_bot, xmpp_peer, xmpp_info) -> None:
    room = xmpp_info["rooms"]["public"]
    bot, inbox = await xmpp_bot()
    owner = await xmpp_peer("owner")
    await owner.join(room, "owner")

    text = unique("room-cmd")
    owner_sid = await owner.say(room, text, room=True)
    ev = await inbox.text(text)
    assert isinstance(ev, IncomingMessage)
    assert ev.envelope.sender == Identity("xmpp", "owner@localhost")
    assert ev.envelope.chat == Room("xmpp", room) and not ev.envelope.is_direct
    assert ev.envelope.message_id == owner_sid  # the room's stanza-id, not the client's id

    # The bot's answer: its id is the stanza-id the room gave it.
    question = unique("question")
    q_sid = await bot.send(Outgoing(ev.envelope.chat, question, reply_to=ev.envelope.message_id))
    seen = await owner.expect_body(question)
    assert trusted_stanza_id(seen, room) == q_sid
    assert reply_target(seen) == owner_sid
    assert seen["type"] == "groupchat"

    # Owner reacts to the bot's message, then takes the reaction back.
    await owner.react(room, q_sid, {"👍"}, room=True)
    added = await inbox.get(lambda e: isinstance(e, IncomingReaction))
    assert added.target_id == q_sid and added.added == {"👍"} and not added.removed
    assert added.envelope.sender == Identity("xmpp", "owner@localhost")
    await owner.react(room, q_sid, set(), room=True)
    removed = await inbox.get(lambda e: isinstance(e, IncomingReaction))
    assert removed.removed == {"👍"} and not removed.added

    # Owner replies to the bot's message with a misleading quote.
    yes = unique("yes")
    reply_sid = await owner.reply(room, yes, q_sid, room=True)
    reply = await inbox.text(yes)
    assert reply.reply_to == q_sid and reply.envelope.message_id == reply_sid

    # The bot reacts to the owner's reply: a groupchat reaction on its stanza-id.
    await bot.react(ev.envelope.chat, reply.envelope.message_id, "✅")
    seen = await owner.expect(lambda m: reactions_of(m)[0] == reply_sid)
    assert seen["type"] == "groupchat" and reactions_of(seen)[1] == {"✅"}


async def test_stranger_with_the_owners_nick_is_not_the_owner(
    xmpp_bot, xmpp_peer, xmpp_info
) -> None:
    room = xmpp_info["rooms"]["public"]
    bot, inbox = await xmpp_bot()
    stranger = await xmpp_peer("stranger")
    await stranger.join(room, "owner")
    text = unique("approve-all")
    await stranger.say(room, text, room=True)
    ev = await inbox.text(text)
    assert ev.envelope.sender_name == "owner"
    assert ev.envelope.sender == Identity("xmpp", "stranger@localhost")
    assert ev.envelope.sender != Identity("xmpp", "owner@localhost")


async def test_room_hiding_real_jids_gives_no_identity(xmpp_bot, xmpp_peer, xmpp_info) -> None:
    room = xmpp_info["rooms"]["hidden"]
    bot, inbox = await xmpp_bot()
    assert not bot.rooms[room].non_anonymous
    owner = await xmpp_peer("owner")
    await owner.join(room, "owner")
    text = unique("hidden")
    await owner.say(room, text, room=True)
    ev = await inbox.text(text)
    assert ev.envelope.sender is None and ev.envelope.sender_name == "owner"


async def test_correction_and_room_history_are_not_commands(xmpp_bot, xmpp_peer, xmpp_info) -> None:
    room = xmpp_info["rooms"]["public"]
    owner = await xmpp_peer("owner")
    await owner.join(room, "owner")
    old = unique("old-command")
    await owner.say(room, old, room=True)

    # The bot joins asking for history: the old message arrives, delayed.
    bot, inbox = await xmpp_bot(join_history=20)
    first = unique("first")
    await owner.say(room, first, room=True)
    ev = await inbox.get(lambda e: isinstance(e, IncomingMessage))
    assert ev.text == first, "room history was delivered as a command"
    assert bot.dropped["delayed"] >= 1

    await owner.correct(room, ev.envelope.message_id, "/approve everything", room=True)
    marker = unique("marker")
    await owner.say(room, marker, room=True)
    await inbox.text(marker)
    after_first = inbox.all[inbox.all.index(ev) + 1 :]
    assert [type(e) for e in after_first] == [IncomingEdit, IncomingMessage]
    assert after_first[0].text == "/approve everything"


async def test_probe_reports_posting_and_real_jids_per_room(xmpp_info) -> None:
    report = await probe_xmpp(xmpp_settings(xmpp_info))
    assert report.logged_in, report
    rooms = {r.room: r for r in report.rooms}
    public, hidden = rooms[xmpp_info["rooms"]["public"]], rooms[xmpp_info["rooms"]["hidden"]]
    assert public.joined and public.can_post and public.sees_real_ids
    assert hidden.joined and hidden.can_post and hidden.sees_real_ids is False
    bad = await probe_xmpp(xmpp_settings(xmpp_info, password="wrong", rooms=()))
    assert bad.connected and not bad.logged_in
