"""The bot process over the real Prosody, its database on a small disk that fills.

The owner in the room gets an answer to every command: reads as usual, changes
refused with the reason; the room hears once that the board cannot save and once
that it can again; the refused command works when sent again. No traceback.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.fulldisk.disk import empty_wal, small_disk
from tests.integration.bot_process import (
    BotProcess,
    bot_config,
    prepare,
    wait_for_occupant,
    write_scenario,
)
from tests.integration.e2e import BOT_NICK, WITHIN, Room
from tests.pipeline.harness import direct

INTENT = "# Report\n\nWrite the report.\n"


async def test_a_full_disk_is_said_in_the_room_and_the_bot_resumes(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    prepare(tmp_path, {"report": INTENT})
    # The operator answers only once the test lets it, so nothing runs meanwhile.
    write_scenario(
        tmp_path, [{"match": "OPERATOR-DECISION", "answer": direct(), "hang": "before_output"}]
    )
    with small_disk(tmp_path) as disk:
        config = bot_config(tmp_path, servers.info)
        text = config.read_text().replace(
            'database = "board.sqlite3"', f'database = "{disk.path}/board.sqlite3"'
        )
        config.write_text(text)
        where = servers.info["xmpp"]["rooms"]["public"]
        peer = await xmpp_peer("owner")
        await peer.join(where, "owner")
        bot = await BotProcess(tmp_path, config).start()
        room = Room(peer, where)
        try:
            await wait_for_occupant(peer, where, BOT_NICK)
            await bot.logged(r"xmpp transport online", within=WITHIN)
            asked = await room.say("/status report")
            assert "phase planned" in (await room.bot_replies_to(asked))["body"]

            await asyncio.to_thread(empty_wal, disk.path / "board.sqlite3")
            disk.fill()
            asked = await room.say("/start report")
            refused = await room.bot_replies_to(asked)
            assert "Not done" in refused["body"] and "full" in refused["body"]
            await room.bot_says(r"cannot save anything right now")
            asked = await room.say("/status report")
            assert "phase planned" in (await room.bot_replies_to(asked))["body"]

            disk.free()
            await room.bot_says(r"saves again", within=60)
            asked = await room.say("/start report")
            assert "operator running" in (await room.bot_replies_to(asked))["body"]
        finally:
            disk.free()
            await bot.stop()
    log = bot.log_text()
    assert "Traceback" not in log, log[-3000:]
    # One episode: a write that fits into a still-full disk does not end it (the room
    # then heard "saves again" while the next change was refused).
    health = [
        line for line in log.splitlines() if "takes no writes" in line or "writes again" in line
    ]
    assert sum("takes no writes" in line for line in health) == 1, health
