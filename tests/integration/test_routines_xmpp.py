"""Routines over the real Prosody (issue 37, Must show): `/every weekdays 09:00 /research
dependency-updates` is answered with the next time in words; bad input (a cron minute
of 61, `/at yesterday`, an unknown command, a card that does not exist) gets an answer
naming the fix, and makes no routine; `/timezone` sets the owner's own zone, which their
next routine reads its time in."""

from __future__ import annotations

import re
from pathlib import Path

from .e2e import start_bot

RESEARCH = "# Dependency updates\n\nWhich dependencies are behind, and what moving costs.\n"


async def test_routines_are_made_and_bad_ones_refused_over_xmpp(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    intents = {"../research-intent/dependency-updates": RESEARCH}
    bot, room = await start_bot(tmp_path, servers.info, [], intents, xmpp_peer)
    try:
        asked = await room.say("/every weekdays 09:00 /research dependency-updates")
        made = (await room.bot_replies_to(asked))["body"]
        assert "⏰ Routine #1: /research dependency-updates weekdays 09:00 (" in made, made
        assert re.search(r"Next: (Mon|Tue|Wed|Thu|Fri) \d{4}-\d\d-\d\d 09:00 \S+ \(in ", made)
        refusals = {
            "/every 61 * * * * /research dependency-updates": "minute 0-59",
            "/at yesterday /research dependency-updates": '"tomorrow 02:00"',
            "/every weekdays 09:00 /frobnicate dependency-updates": "/help all lists",
            "/every weekdays 09:00 /start no-such-card": "make it first with /draft",
        }
        for command, fix in refusals.items():
            answer = (await room.bot_replies_to(await room.say(command)))["body"]
            assert fix in answer, (command, answer)
        listed = (await room.bot_replies_to(await room.say("/routines")))["body"]
        assert listed.count("\n#") == 1 and "next " in listed
        # The owner's own zone, as a phone writes it: their next routine reads its time there.
        said = (await room.bot_replies_to(await room.say("/timezone america/new_york")))["body"]
        assert "🕘 Your time zone is America/New_York now (it is " in said, said
        assert "keep their zone (1 routine;" in said
        asked = await room.say("/every every day 09:00 /research dependency-updates")
        made = (await room.bot_replies_to(asked))["body"]
        assert "every day 09:00 (America/New_York). Next: " in made, made
        assert re.search(r"Next: \w{3} \d{4}-\d\d-\d\d 09:00 E[SD]T \(in ", made), made
        bad = (await room.bot_replies_to(await room.say("/timezone Mars/Olympus")))["body"]
        assert "is no time zone; write an IANA name" in bad and "/timezone reset" in bad
    finally:
        await bot.stop()
    rows = bot.query("SELECT command, state, timezone FROM routines ORDER BY id")
    assert [(r["command"], r["state"], r["timezone"]) for r in rows][1:] == [
        ("/research dependency-updates", "active", "America/New_York")
    ]
    assert len(rows) == 2
