"""Commands sent while the bot is down run once after it is back (real Prosody, real bot).

A killed bot's session hibernates on the server (XEP-0198) and swallows what is
sent to it; a restarted bot opens a new session. It reads the archives (its
own for direct chats, each room's) from the last message it handled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.pipeline.harness import operator_answer

from .bot_process import BotProcess, bot_config, prepare, write_scenario
from .e2e import WITHIN, bot_says_directly, reply_target, start_bot

INTENT = "# Reporting\n\nBuild the monthly report.\n"
ASK = operator_answer(
    {"decision": "needs_human", "reason": "unclear", "human_action": "Which storage?"}
)


def replies_to(peer: Any, message_id: str) -> list[Any]:
    """Every reply to `message_id` the peer received so far (left in its inbox)."""
    seen = []
    while not peer.inbox.empty():
        seen.append(peer.inbox.get_nowait())
    for message in seen:
        peer.inbox.put_nowait(message)
    return [m for m in seen if reply_target(m) == message_id]


async def test_three_commands_sent_during_an_outage_run_once_each_after_restart(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    turns = [{"match": "OPERATOR-DECISION", "answer": ASK}]
    intents = {"report": INTENT, "other": INTENT}
    bot, room = await start_bot(tmp_path, servers.info, turns, intents, xmpp_peer)
    bot_jid = servers.info["xmpp"]["accounts"]["bot"]["jid"]
    owner = room.peer
    try:
        ready = await room.say("/status")
        await room.bot_replies_to(ready)  # up, and it has read its archives once
        await bot.kill()

        start = await room.say("/start report")
        archive = await owner.say(bot_jid, "/archive other")
        status = await room.say("/status report")

        await bot.start()
        await room.bot_replies_to(start)
        await bot_says_directly(owner, bot_jid, r"other: /archive")
        await room.bot_replies_to(status)
        await room.bot_says(r"Which storage\?")
        assert bot.phase("report") == "needs_human"
        assert bot.phase("other") == "archived"

        # Restart once more, cleanly: nothing is run or answered a second time.
        await bot.stop()
        await bot.start()
        marker = await room.say("/status other")
        await room.bot_replies_to(marker)
        for message_id in (start, archive, status):
            assert len(replies_to(owner, message_id)) == 0, "answered twice"
        rows = bot.query("SELECT reply_to, count(*) AS n FROM outbox GROUP BY reply_to")
        answered = {r["reply_to"]: r["n"] for r in rows}
        assert [answered.get(i) for i in (start, archive, status)] == [1, 1, 1]
        starts = bot.query(
            "SELECT count(*) AS n FROM events e JOIN cards c ON c.id = e.card_id "
            "WHERE c.slug = 'report' AND e.to_phase = 'operator_running'"
        )
        assert starts[0]["n"] == 1
    finally:
        await bot.stop()


async def test_commands_older_than_the_limit_are_answered_too_old_and_not_run(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    bot, room = await start_bot(
        tmp_path,
        servers.info,
        [],
        {"report": INTENT, "other": INTENT},
        xmpp_peer,
        bot_lines=("catch_up_max_age_s = 0",),
    )
    bot_jid = servers.info["xmpp"]["accounts"]["bot"]["jid"]
    owner = room.peer
    try:
        ready = await room.say("/status")
        await room.bot_replies_to(ready)
        await bot.stop()  # a clean stop this time: no session is left on the server

        archive = await room.say("/archive report")
        await owner.say(bot_jid, "/archive other")

        await bot.start()
        told = await room.bot_replies_to(archive, within=WITHIN)
        assert "too old" in told["body"] and "not run" in told["body"].lower()
        await bot_says_directly(owner, bot_jid, r"too old")
        assert bot.phase("report") == bot.phase("other") == "planned"
        live = await room.say("/status report")  # what is live still runs
        await room.bot_replies_to(live)
    finally:
        await bot.stop()


async def test_matrix_commands_from_before_a_restart_obey_the_same_age_limit(
    tmp_path: Path, servers, matrix_peer
) -> None:
    """Matrix's sync token covers the gap already; the age limit applies there too."""
    prepare(tmp_path, {"report": INTENT})
    write_scenario(tmp_path, [])
    config = bot_config(
        tmp_path, servers.info, xmpp=False, matrix=True, bot_lines=("catch_up_max_age_s = 0",)
    )
    bot = await BotProcess(tmp_path, config).start()
    owner = await matrix_peer("owner")
    room = servers.info["matrix"]["rooms"]["public"]["room_id"]
    bot_id = servers.info["matrix"]["accounts"]["bot"]["user_id"]

    async def answer_to(event_id: str) -> dict[str, Any]:
        _, event = await owner.expect(
            lambda r, ev: (
                r == room
                and ev.get("sender") == bot_id
                and ((ev.get("content") or {}).get("m.relates_to") or {})
                .get("m.in_reply_to", {})
                .get("event_id")
                == event_id
            ),
            within=WITHIN,
        )
        return event

    try:
        await bot.logged(r"matrix transport online")
        await answer_to(await owner.say(room, "/status"))  # live: answered as ever
        await bot.stop()
        archive = await owner.say(room, "/archive report")
        await bot.start()
        told = await answer_to(archive)
        assert "too old" in told["content"]["body"]
        assert bot.phase("report") == "planned"
    finally:
        await bot.stop()
