"""Matrix transport against the real Synapse, with a real matrix-nio owner client."""

from __future__ import annotations

import asyncio
from typing import Any

from chatbot.transports.base import (
    Identity,
    IncomingEdit,
    IncomingMessage,
    IncomingReaction,
    Outgoing,
    Room,
)
from chatbot.transports.matrix.probe import probe_matrix

from .conftest import WITHIN, matrix_settings, unique

OWNER = Identity("matrix", "@owner:localhost")


def content(ev: dict[str, Any]) -> dict[str, Any]:
    return ev.get("content") or {}


async def test_room_message_round_trip_with_html_notice(
    matrix_bot, matrix_peer, matrix_info
) -> None:
    room_id = matrix_info["rooms"]["public"]["room_id"]
    bot, inbox = await matrix_bot()
    owner = await matrix_peer("owner")
    await owner.join(room_id)
    text = unique("status")
    event_id = await owner.say(room_id, text)

    ev = await inbox.text(text)
    assert isinstance(ev, IncomingMessage)
    assert ev.envelope.sender == OWNER and ev.envelope.chat == Room("matrix", room_id)
    assert ev.envelope.message_id == event_id and not ev.envelope.is_direct

    answer = unique("answer")
    answer_id = await bot.send(
        Outgoing(
            ev.envelope.chat,
            answer,
            html=f"<b>{answer}</b>",
            reply_to=ev.envelope.message_id,
            txn_id=unique("txn"),
        )
    )
    seen = await owner.expect_body(answer)
    assert seen["event_id"] == answer_id
    assert content(seen)["msgtype"] == "m.notice"
    assert content(seen)["formatted_body"] == f"<b>{answer}</b>"
    assert content(seen)["m.relates_to"]["m.in_reply_to"]["event_id"] == event_id


async def test_reactions_replies_and_edits(matrix_bot, matrix_peer, matrix_info) -> None:
    room_id = matrix_info["rooms"]["public"]["room_id"]
    bot, inbox = await matrix_bot()
    owner = await matrix_peer("owner")
    await owner.join(room_id)
    question = unique("question")
    q_id = await bot.send(Outgoing(Room("matrix", room_id), question))

    reaction_id = await owner.react(room_id, q_id, "👍")
    added = await inbox.get(lambda e: isinstance(e, IncomingReaction))
    assert added.target_id == q_id and added.added == {"👍"} and added.envelope.sender == OWNER
    await owner.redact(room_id, reaction_id)
    removed = await inbox.get(lambda e: isinstance(e, IncomingReaction))
    assert removed.target_id == q_id and removed.removed == {"👍"}

    yes = unique("yes")
    reply_id = await owner.reply(room_id, yes, q_id)
    reply = await inbox.text(yes)
    assert reply.reply_to == q_id and reply.envelope.message_id == reply_id

    # The bot's reaction and reply, as the owner's client sees them.
    await bot.react(reply.envelope.chat, reply_id, "✅")
    _, seen = await owner.expect(
        lambda _r, e: e["type"] == "m.reaction" and e["sender"] == "@bot:localhost"
    )
    assert content(seen)["m.relates_to"] == {
        "rel_type": "m.annotation",
        "event_id": reply_id,
        "key": "✅",
    }
    done = unique("done")
    await bot.send(Outgoing(reply.envelope.chat, done, reply_to=reply_id))
    seen = await owner.expect_body(done)
    assert content(seen)["m.relates_to"]["m.in_reply_to"]["event_id"] == reply_id

    # An edit is never a command.
    await owner.edit(room_id, reply_id, "/approve everything")
    marker = unique("marker")
    await owner.say(room_id, marker)
    await inbox.text(marker)
    after = inbox.all[inbox.all.index(reply) + 1 :]
    assert [type(e) for e in after] == [IncomingEdit, IncomingMessage]
    assert after[0].text == "/approve everything" and after[0].target_id == reply_id


async def test_a_configured_alias_works_as_a_send_target(
    matrix_bot, matrix_peer, matrix_info
) -> None:
    alias = matrix_info["rooms"]["public"]["alias"]
    room_id = matrix_info["rooms"]["public"]["room_id"]
    bot, _ = await matrix_bot(rooms=(alias,))
    assert bot.room_ids == {alias: room_id}
    owner = await matrix_peer("owner")
    await owner.join(room_id)
    text = unique("to-alias")
    await bot.send(Outgoing(Room("matrix", alias), text))
    await owner.expect_body(text)
    bot.room_ids.clear()  # an alias that was not configured is looked up
    await bot.send(Outgoing(Room("matrix", alias), text + "-2"))
    await owner.expect_body(text + "-2")


async def test_same_txn_id_posts_once(matrix_bot, matrix_info) -> None:
    room = Room("matrix", matrix_info["rooms"]["public"]["room_id"])
    bot, _ = await matrix_bot()
    txn = unique("outbox-item")
    first = await bot.send(Outgoing(room, "only once", txn_id=txn))
    again = await bot.send(Outgoing(room, "only once", txn_id=txn))
    assert first == again


async def test_stranger_with_the_owners_display_name_is_not_the_owner(
    matrix_bot, matrix_peer, matrix_info
) -> None:
    room_id = matrix_info["rooms"]["public"]["room_id"]
    bot, inbox = await matrix_bot()
    stranger = await matrix_peer("stranger")
    await stranger.join(room_id)
    await stranger.client.set_displayname(matrix_info["accounts"]["owner"]["display_name"])
    try:
        text = unique("approve-all")
        await stranger.say(room_id, text)
        ev = await inbox.text(text)
        assert (
            ev.envelope.sender == Identity("matrix", "@stranger:localhost")
            and ev.envelope.sender != OWNER
        )
    finally:
        await stranger.client.set_displayname("Stranger")


async def test_joins_only_on_an_owners_invite(matrix_bot, matrix_peer) -> None:
    bot, inbox = await matrix_bot()
    stranger = await matrix_peer("stranger")
    owner = await matrix_peer("owner")
    strangers_room = await stranger.create_room(invite=("@bot:localhost",))
    owners_dm = await owner.create_room(invite=("@bot:localhost",), direct=True)

    # The bot joining the owner's DM comes after it saw the stranger's invite.
    await owner.expect(
        lambda r, e: (
            r == owners_dm
            and e["type"] == "m.room.member"
            and e.get("state_key") == "@bot:localhost"
            and content(e).get("membership") == "join"
        )
    )
    assert bot.dropped["invite-not-owner"] >= 1
    members = await stranger.client.joined_members(strangers_room)
    assert "@bot:localhost" not in [m.user_id for m in members.members]

    text = unique("dm")
    await owner.say(owners_dm, text)
    ev = await inbox.text(text)
    assert (
        ev.envelope.is_direct
        and ev.envelope.sender == OWNER
        and ev.envelope.chat == Room("matrix", owners_dm)
    )
    # Sending to the owner as a person uses that direct chat.
    answer = unique("dm-answer")
    await bot.send(Outgoing(OWNER, answer))
    assert (await owner.expect_body(answer))["sender"] == "@bot:localhost"


async def test_sending_to_a_person_opens_a_direct_chat(matrix_bot, matrix_peer) -> None:
    bot, _ = await matrix_bot()
    stranger = await matrix_peer("stranger")
    text = unique("hello-person")
    await bot.send(Outgoing(Identity("matrix", "@stranger:localhost"), text))
    room_id = await asyncio.wait_for(stranger.invites.get(), WITHIN)
    await stranger.join(room_id)
    seen = await stranger.expect_body(text)
    assert seen["sender"] == "@bot:localhost"
    # The second message goes to the same room, no new invite.
    again = unique("again")
    await bot.send(Outgoing(Identity("matrix", "@stranger:localhost"), again))
    await stranger.expect_body(again)
    assert stranger.invites.empty()


async def test_probe_joins_and_checks_posting(matrix_info) -> None:
    report = await probe_matrix(
        matrix_settings(
            matrix_info, rooms=(matrix_info["rooms"]["public"]["alias"], "#missing:localhost")
        )
    )
    assert report.logged_in, report
    ok, missing = report.rooms
    assert ok.joined and ok.can_post and ok.sees_real_ids
    assert not missing.joined and "not found" in missing.detail
    bad = await asyncio.wait_for(
        probe_matrix(matrix_settings(matrix_info, password="wrong")), WITHIN
    )
    assert bad.connected and not bad.logged_in
