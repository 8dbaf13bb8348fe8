"""Routines made in chat (chat/routines.py): `/every` and `/at` answer with the next
time in words, or refuse bad input with the fix; `/routines` lists them with their next
time; `/routine pause|resume|delete`. A real store and board (tests/chat/conftest.py)."""

from __future__ import annotations

import re

from chatbot.domain.phases import Kind, Phase
from tests.chat.conftest import REQUESTER, Env, make_env, msg


async def test_every_weekdays_is_answered_with_the_next_time_in_words(env: Env) -> None:
    await env.card("dependency-updates", Phase.PLANNED, kind=Kind.RESEARCH)
    row = await env.one(msg("/every weekdays 09:00 /research dependency-updates"))
    assert row.text.startswith("⏰ Routine #1: /research dependency-updates weekdays 09:00 (")
    assert re.search(r"Next: (Mon|Tue|Wed|Thu|Fri) \d{4}-\d\d-\d\d 09:00 \S+ \(in ", row.text)
    assert row.reply_to is not None  # the answer replies to the command
    (routine,) = await env.board.routines.listed()
    assert routine.owner == "xmpp:owner@example.org" and routine.cron == "0 9 * * 1-5"
    assert (routine.target, routine.catch_up) == ("board@conference.example.org", "once")


async def test_at_tomorrow_and_the_options(env: Env) -> None:
    await env.card("refactor")
    row = await env.one(msg("/at tomorrow 02:00 --skip --budget 5 /start refactor"))
    assert "once at" in row.text and "02:00" in row.text
    (routine,) = await env.board.routines.listed()
    assert (routine.catch_up, routine.budget_usd, routine.cron) == ("skip", 5.0, None)


async def test_bad_input_gets_an_answer_that_names_the_fix(env: Env) -> None:
    await env.card("deps")
    cases = {
        "/every 61 * * * * /start deps": "minute 0-59",
        "/at yesterday /start deps": 'write "today 18:00" or "tomorrow 02:00"',
        "/every weekdays 09:00 /frobnicate deps": "/help all lists every command",
        "/every weekdays 09:00 /status": "/start, /draft, /research, /inspect",
        "/every weekdays 09:00 /start no-such-card": "make it first with /draft",
        "/every weekdays 09:00": "Say which command it runs",
        "/every tomorrow 02:00 /start deps": "use /at",
        "/every weekdays 09:00 --budget x /start deps": "--budget takes dollars",
    }
    for text, fix in cases.items():
        row = await env.one(msg(text))
        assert fix in row.text, (text, row.text)
    assert await env.board.routines.listed() == []


async def test_an_unknown_command_after_the_time_suggests_close_ones(env: Env) -> None:
    row = await env.one(msg("/every monday 9am /reserch deps"))
    assert "/research" in row.text


async def test_routines_lists_the_next_time_and_routine_pauses_resumes_deletes(
    env: Env,
) -> None:
    await env.card("deps")
    await env.said(msg("/every monday 9am /start deps"))
    listed = (await env.one(msg("/routines"))).text
    assert listed.startswith("Routines:\n#1 /start deps — monday 9am (")
    assert "next Mon " in listed
    assert "paused" in (await env.one(msg("/routine pause 1"))).text
    assert "paused: paused by xmpp:owner@example.org" in (await env.one(msg("/routines"))).text
    assert (await env.board.routines.get(1)).pause_cause == "owner"
    # An owner's pause waits for nobody: it is not in the inbox.
    assert "Nothing waits for you" in (await env.one(msg("/inbox"))).text
    assert "runs again. Next: Mon" in (await env.one(msg("/routine resume 1"))).text
    assert "is deleted" in (await env.one(msg("/routine delete 1"))).text
    assert "no routine #1" in (await env.one(msg("/routine delete 1"))).text
    assert "No routines" in (await env.one(msg("/routines"))).text


async def test_a_requester_may_look_but_not_make_one(env: Env) -> None:
    await env.card("deps")
    assert "Only an owner" in (await env.one(msg("/every monday 9am /start deps", REQUESTER))).text
    assert "No routines" in (await env.one(msg("/routines", REQUESTER))).text


async def test_in_german(store, tmp_path) -> None:
    env = make_env(store, tmp_path, locale="de")
    await env.card("deps")
    row = await env.one(msg("/every weekdays 09:00 /start deps"))
    assert (
        row.text.startswith("⏰ Routine #1: /start deps weekdays 09:00") and "Nächster" in row.text
    )


async def test_bad_input_is_answered_in_german_throughout(store, tmp_path) -> None:
    env = make_env(store, tmp_path, locale="de")
    await env.card("deps")
    cases = {
        "/every 61 * * * * /start deps": "ist kein Cron-Ausdruck",
        "/at yesterday /start deps": "liegt in der Vergangenheit",
        "/every tomorrow 02:00 /start deps": "nimm /at",
        "/every fortnightly 9am /start deps": "kann ich nicht als Tag lesen",
        "/every weekdays 09:00 /start no-such-card": "lege sie zuerst mit /draft an",
    }
    for text, german in cases.items():
        answer = (await env.one(msg(text))).text
        assert answer.startswith(("Diese Zeitangabe geht nicht: ", "Es gibt keine Karte")), answer
        assert german in answer, (text, answer)
        for english in ("is no", "is in the past", "use /at", "not a day I can read"):
            assert english not in answer, (text, answer)
