"""A stranger's flood costs bounded storage (real Prosody, real bot process).

Every stanza a stranger sent used to leave a `processed_events` row (kept 30
days), and every reaction to a made-up id a `kv` row (kept for ever). What a
stranger sends changes nothing, so it now leaves nothing in the database but
the once-an-hour refusal and the archive position.
"""

from __future__ import annotations

import time
from pathlib import Path

from chatbot.transports.xmpp import outgoing as out

from .e2e import start_bot

INTENT = "# Reporting\n\nBuild the monthly report.\n"
FLOOD = 5_000
TABLES = ("kv", "processed_events", "outbox", "chat_messages")


def sizes(bot) -> dict[str, int]:
    return {t: bot.query(f"SELECT count(*) AS n FROM {t}")[0]["n"] for t in TABLES}


async def test_a_5000_stanza_stranger_flood_leaves_table_sizes_bounded(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    bot, room = await start_bot(tmp_path, servers.info, [], {"report": INTENT}, xmpp_peer)
    bot_jid = servers.info["xmpp"]["accounts"]["bot"]["jid"]
    try:
        ready = await room.say("/status")
        await room.bot_replies_to(ready)
        before = sizes(bot)
        stranger = await xmpp_peer("stranger")
        await stranger.join(room.room, "mallory")
        t0 = time.monotonic()
        for n in range(FLOOD - 1):
            kind = n % 5
            if kind == 0:  # a direct message
                msg = stranger.build(bot_jid, f"/start report {n}", room=False)
            elif kind in (1, 2):  # a reaction to an id nobody ever posted
                msg = stranger.build(room.room, None, room=True)
                out.set_reactions(msg, f"made-up-{n}", {"👍"})
            elif kind == 3:
                msg = stranger.build(room.room, f"/archive report {n}", room=True)
            else:
                msg = stranger.build(room.room, f"chatter {n}", room=True)
            msg.send()
        # The room echoes the last one only after every earlier stanza went through.
        last = stranger.build(room.room, "/start report", room=True)
        await stranger.expect(lambda m: m["id"] == last["id"], send=last, within=120)
        asked = await room.say("/status")
        await room.bot_replies_to(asked, within=120)
        elapsed = time.monotonic() - t0
        after = sizes(bot)
        print(f"\n{FLOOD} stranger stanzas handled in {elapsed:.1f}s; rows before -> after:")
        for table in TABLES:
            print(f"  {table}: {before[table]} -> {after[table]}")
        grown = {t: after[t] - before[t] for t in TABLES}
        # A few rows whatever the flood's size: the owner's /status and its answer, the
        # stranger's one refusal an hour, the archive marks (the first answer's record
        # may land just after `before` was read).
        assert grown["processed_events"] <= 2, grown
        assert grown["kv"] <= 3, grown
        assert grown["outbox"] <= 3 and grown["chat_messages"] <= 4, grown
        assert bot.phase("report") == "planned"
    finally:
        await bot.stop()
