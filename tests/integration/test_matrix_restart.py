"""The bot restarts on Matrix: nothing old again, nothing new lost, once each."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chatbot.store import Store
from chatbot.store.kv import TransportState
from chatbot.transports.base import IncomingMessage, Outgoing

from .conftest import WITHIN, unique


@pytest.fixture
async def store(tmp_path: Path):
    """The bot's own store, as `chatbot run` hands it to the transports."""
    opened = await Store.open(tmp_path / "board.sqlite3")
    yield TransportState(opened)
    await opened.close()


def texts(inbox, prefix: str) -> list[str]:
    return [
        e.text for e in inbox.all if isinstance(e, IncomingMessage) and e.text.startswith(prefix)
    ]


async def test_restart_delivers_what_came_while_down_once(
    store, matrix_bot, matrix_peer, matrix_info
) -> None:
    room_id = matrix_info["rooms"]["public"]["room_id"]
    owner = await matrix_peer("owner")
    await owner.join(room_id)
    tag = unique("restart")

    bot, inbox = await matrix_bot(store)
    device = bot.client.device_id
    await owner.say(room_id, f"{tag} A")
    await inbox.text(f"{tag} A")
    await bot.stop()

    await owner.say(room_id, f"{tag} B while down")

    bot2, inbox2 = await matrix_bot(store)
    assert bot2.client.device_id == device, "the stored device should be reused, not a new login"
    await inbox2.text(f"{tag} B while down")
    await owner.say(room_id, f"{tag} C")
    await inbox2.text(f"{tag} C")
    assert texts(inbox2, tag) == [f"{tag} B while down", f"{tag} C"]


async def test_a_long_gap_is_back_filled_in_order(
    store, matrix_bot, matrix_peer, matrix_info
) -> None:
    room_id = matrix_info["rooms"]["public"]["room_id"]
    owner = await matrix_peer("owner")
    await owner.join(room_id)
    tag = unique("gap")
    bot, inbox = await matrix_bot(store, timeline_limit=2)
    await bot.stop()

    sent = [f"{tag} {i}" for i in range(7)]
    for text in sent:
        await owner.say(room_id, text)

    # The sync shows only the last 2; the other 5 come from /messages.
    bot2, inbox2 = await matrix_bot(store, timeline_limit=2)
    await inbox2.text(sent[-1])
    assert texts(inbox2, tag) == sent


async def test_bot_comes_back_after_a_homeserver_restart(
    servers, matrix_bot, matrix_peer, matrix_info
) -> None:
    room_id = matrix_info["rooms"]["public"]["room_id"]
    bot, inbox = await matrix_bot()
    await asyncio.to_thread(servers.stop_synapse)
    await asyncio.wait_for(bot.wait_offline(), WITHIN)
    await asyncio.to_thread(servers.start_synapse)
    await asyncio.wait_for(bot.wait_online(), WITHIN)

    owner = await matrix_peer("owner")
    text = unique("after-homeserver-restart")
    await owner.say(room_id, text)
    ev = await inbox.text(text)
    answer = unique("answer")
    await bot.send(Outgoing(ev.envelope.chat, answer))
    await owner.expect_body(answer)
