"""An owner's own time zone (issue 37: routines run "in the owner's or the config's time
zone"): `/timezone <zone>` keeps it on the board for the routines that owner makes,
`/timezone` shows it, `/timezone reset` goes back to `[bot] timezone`; a bad zone is
refused naming the fix, in English and German. A routine made by that owner fires at
the owner's wall-clock time across the owner's daylight-saving change, not the config's.
A real store, board and chat (tests/chat/conftest.py), the real clock loop's `tick`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from chatbot.chat.routine_clock import RoutineClock
from chatbot.config import parse_config
from tests.board.test_config import MINIMAL
from tests.chat.conftest import MATRIX_OWNER, REQUESTER, Env, make_env, msg

NEW_YORK = ZoneInfo("America/New_York")


def config(tmp_path: Path):
    text = MINIMAL.replace("[bot]\n", '[bot]\ntimezone = "Europe/Berlin"\n')
    return parse_config(text, tmp_path / "bot.toml")


def berlin_env(store, tmp_path: Path, locale: str = "en") -> Env:
    return make_env(store, tmp_path, locale, config=config(tmp_path))


async def test_an_owner_sets_shows_and_clears_their_own_zone(store, tmp_path) -> None:
    env = berlin_env(store, tmp_path)
    await env.card("deps")
    said = (await env.one(msg("/timezone"))).text
    assert said.startswith("🕘 You have no time zone of your own") and "Europe/Berlin" in said
    # A phone writes it in lower case: the zone database's spelling is kept.
    said = (await env.one(msg("/timezone america/new_york"))).text
    assert said.startswith("🕘 Your time zone is America/New_York now (it is ")
    assert "kept" not in said and "before" not in said
    assert await env.board.routines.owner_zone("xmpp:owner@example.org") == "America/New_York"
    said = (await env.one(msg("/timezone"))).text
    assert said.startswith("🕘 Your time zone is America/New_York (it is ")
    assert "E" in said.split("(it is ")[1][:16]  # EST or EDT, the zone's own abbreviation

    # A routine this owner makes reads its time in that zone; another owner's in the config's.
    made = (await env.one(msg("/every every day 09:00 /start deps"))).text
    assert "every day 09:00 (America/New_York)" in made and " 09:00 E" in made
    matrix_room = msg("/every every day 09:00 /start deps", MATRIX_OWNER)
    assert "(Europe/Berlin)" in (await env.one(matrix_room)).text
    mine, theirs = await env.board.routines.listed()
    assert (mine.timezone, theirs.timezone) == ("America/New_York", "Europe/Berlin")
    listed = (await env.one(msg("/routines"))).text
    assert "every day 09:00 (America/New_York)" in listed
    assert listed.endswith(
        "Your time zone for new routines: America/New_York (yours; /timezone changes it)."
    )

    # Changing it leaves the routines made before in their zone, and says so.
    said = (await env.one(msg("/timezone Asia/Tokyo"))).text
    assert "Routines you made before keep their zone (1 routine; /routines" in said
    assert (await env.board.routines.get(mine.id)).timezone == "America/New_York"
    said = (await env.one(msg("/timezone reset"))).text
    assert said.startswith("🕘 Your own time zone is cleared") and "Europe/Berlin" in said
    assert await env.board.routines.owner_zone("xmpp:owner@example.org") is None
    assert "(the configuration's;" in (await env.one(msg("/routines"))).text


async def test_a_bad_zone_is_refused_naming_the_fix_in_both_languages(store, tmp_path) -> None:
    env = berlin_env(store, tmp_path)
    said = (await env.one(msg("/timezone Mars/Olympus"))).text
    assert said.startswith("That time zone does not work: 'mars/olympus' is no time zone; ")
    assert 'such as "Europe/Berlin" or "UTC"' in said
    assert "/timezone reset uses the configuration's, Europe/Berlin." in said
    assert await env.board.routines.owner_zone("xmpp:owner@example.org") is None
    assert "Only an owner" in (await env.one(msg("/timezone UTC", REQUESTER))).text
    german = berlin_env(store, tmp_path, "de")
    said = (await german.one(msg("/timezone Mars/Olympus"))).text
    assert said.startswith("Diese Zeitzone geht nicht: 'mars/olympus' ist keine Zeitzone; ")
    assert "/timezone reset nimmt die der Konfiguration, Europe/Berlin." in said
    said = (await german.one(msg("/timezone europe/vienna"))).text
    assert said.startswith("🕘 Deine Zeitzone ist jetzt Europe/Vienna (dort ist es ")


async def test_a_routine_keeps_its_owners_local_time_across_the_owners_dst_change(
    store, tmp_path
) -> None:
    env = berlin_env(store, tmp_path)
    await env.card("deps")
    await env.said(msg("/timezone America/New_York"))
    await env.said(msg("/every every day 09:00 /start deps"))
    (made,) = await env.board.routines.listed()

    def ny(*parts: int) -> float:
        return datetime(*parts, tzinfo=NEW_YORK).timestamp()

    # From Friday 12 March 2027: New York springs forward on Sunday the 14th, Berlin not
    # until the 28th, so the owner's 09:00 moves an hour against the config's zone.
    await env.board.routines.set_state(made.id, "active", now=ny(2027, 3, 12, 10, 0))
    saturday_9, sunday_9 = ny(2027, 3, 13, 9, 0), ny(2027, 3, 14, 9, 0)
    assert sunday_9 - saturday_9 == 23 * 3600
    assert saturday_9 == datetime(2027, 3, 13, 14, 0, tzinfo=ZoneInfo("UTC")).timestamp()
    assert sunday_9 == datetime(2027, 3, 14, 13, 0, tzinfo=ZoneInfo("UTC")).timestamp()
    clock = RoutineClock(env.chat)
    assert await clock.tick(saturday_9 - 1) == saturday_9
    await clock.tick(saturday_9)
    assert await clock.tick(saturday_9 + 60) == sunday_9  # not 14:00 UTC, not Berlin's 09:00
    await clock.tick(sunday_9 - 1)
    assert len(await env.board.routines.runs(made.id)) == 1
    await clock.tick(sunday_9)
    runs = await env.board.routines.runs(made.id)
    assert [run.due_at for run in runs] == [sunday_9, saturday_9]
    texts = [row.text for row in await env.outbox()]
    assert any("due Sat 2027-03-13 09:00 EST" in t for t in texts)
    assert any("due Sun 2027-03-14 09:00 EDT" in t for t in texts)
