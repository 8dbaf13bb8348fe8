"""When a routine runs (domain/schedules.py): cron fields through cronsim, the few
words translated, one moment for /at; every time read in the routine's zone, also
across daylight-saving changes. Moments are handed in: no clock is read."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from chatbot.domain.schedules import TEXTS, ScheduleError, local_words, parse, zone_problem

BERLIN = "Europe/Berlin"
TZ = ZoneInfo(BERLIN)


def at(*parts: int) -> float:
    return datetime(*parts, tzinfo=TZ).timestamp()


# Wednesday 2 December 2026, 17:00 in Berlin.
NOW = at(2026, 12, 2, 17, 0)


@pytest.mark.parametrize(
    ("when", "cron"),
    [
        ("weekdays 09:00", "0 9 * * 1-5"),
        ("monday 9am", "0 9 * * 1"),
        ("every monday at 9am", "0 9 * * 1"),
        ("every day 18:30", "30 18 * * *"),
        ("daily 6:05pm", "5 18 * * *"),
        ("weekends noon", "0 12 * * 6,0"),
        ("0 9 * * 1-5", "0 9 * * 1-5"),
        ("*/15 * * * *", "*/15 * * * *"),
    ],
)
def test_a_rhythm_in_words_or_cron_is_read(when: str, cron: str) -> None:
    assert parse(when, BERLIN, NOW, once=False).cron == cron


@pytest.mark.parametrize(
    ("when", "moment"),
    [
        ("tomorrow 02:00", at(2026, 12, 3, 2, 0)),
        ("today 18:00", at(2026, 12, 2, 18, 0)),
        ("monday 9am", at(2026, 12, 7, 9, 0)),
        ("wednesday 9am", at(2026, 12, 9, 9, 0)),  # today's has passed: next week's
        ("16:00", at(2026, 12, 3, 16, 0)),  # passed today: tomorrow's
        ("2026-12-24 18:00", at(2026, 12, 24, 18, 0)),
    ],
)
def test_one_moment_in_words_is_read_in_the_zone(when: str, moment: float) -> None:
    schedule = parse(when, BERLIN, NOW, once=True)
    assert schedule.at == moment and schedule.next_after(NOW) == moment
    assert schedule.next_after(moment) is None


@pytest.mark.parametrize(
    ("when", "once", "fix"),
    [
        ("61 * * * *", False, "minute 0-59"),
        ("yesterday", True, "tomorrow 02:00"),
        ("yesterday 10:00", True, "in the past"),
        ("today 09:00", True, "in the past"),
        ("2026-02-30 10:00", True, "YYYY-MM-DD"),
        ("weekdays 25:00", False, "hours 0-23"),
        ("fortnightly 9am", False, "weekdays"),
        ("tomorrow 02:00", False, "use /at"),
        ("weekdays 09:00", True, "use /every"),
        ("0 9 * * 1", True, "use /every"),
        ("0 0 30 2 *", False, "day 1-31"),
        ("", False, "say when"),
    ],
)
def test_bad_input_names_the_fix(when: str, once: bool, fix: str) -> None:
    with pytest.raises(ScheduleError, match=fix):
        parse(when, BERLIN, NOW, once=once)


@pytest.mark.parametrize(
    ("when", "once", "german"),
    [
        ("61 * * * *", False, "ist kein Cron-Ausdruck"),
        ("yesterday", True, 'liegt in der Vergangenheit: schreibe "today 18:00"'),
        ("2026-02-30 10:00", True, "ist kein Datum: schreibe JJJJ-MM-TT"),
        ("weekdays 25:00", False, "ist keine Uhrzeit: Stunden 0-23"),
        ("fortnightly 9am", False, "kann ich nicht als Tag lesen"),
        ("tomorrow 02:00", False, "nimm /at"),
        ("weekdays 09:00", True, "nimm /every"),
        ("", False, "sag, wann"),
    ],
)
def test_bad_input_names_the_fix_in_german_too(when: str, once: bool, german: str) -> None:
    with pytest.raises(ScheduleError) as raised:
        parse(when, BERLIN, NOW, once=once)
    assert german in raised.value.said("de")
    assert german not in str(raised.value)  # the error's own text stays English


def test_every_schedule_problem_has_both_languages_with_the_same_values() -> None:
    fields = re.compile(r"{(\w+)")
    assert set(TEXTS["en"]) == set(TEXTS["de"])
    for key, english in TEXTS["en"].items():
        assert set(fields.findall(english)) == set(fields.findall(TEXTS["de"][key])), key
    assert "keine Zeitzone" in (zone_problem("Mars/Olympus", "de") or "")


def test_an_unknown_zone_is_refused_with_an_example() -> None:
    with pytest.raises(ScheduleError, match="Europe/Berlin"):
        parse("weekdays 09:00", "Mars/Olympus", NOW, once=False)


def test_a_daily_time_stays_at_the_wall_clock_across_daylight_saving() -> None:
    schedule = parse("every day 09:00", BERLIN, NOW, once=False)
    # Berlin springs forward on 29 March 2026 and falls back on 25 October 2026.
    before = schedule.next_after(at(2026, 3, 27, 10, 0))
    after = schedule.next_after(before)
    assert after - before == 23 * 3600  # the short day
    assert datetime.fromtimestamp(after, TZ).hour == 9
    autumn = schedule.next_after(at(2026, 10, 23, 10, 0))
    assert schedule.next_after(autumn) - autumn == 25 * 3600
    # An hour that does not exist that night runs at the first moment after it.
    night = parse("every day 02:30", BERLIN, NOW, once=False)
    skipped = night.next_after(at(2026, 3, 28, 12, 0))
    assert datetime.fromtimestamp(skipped, TZ).strftime("%H:%M") == "03:00"


def test_between_keeps_the_missed_times_in_order() -> None:
    schedule = parse("every day 09:00", BERLIN, NOW, once=False)
    missed = schedule.between(at(2026, 12, 1, 10, 0), at(2026, 12, 4, 10, 0))
    assert missed == [at(2026, 12, 2, 9, 0), at(2026, 12, 3, 9, 0), at(2026, 12, 4, 9, 0)]


def test_a_moment_in_words_names_its_day_and_zone() -> None:
    assert local_words(at(2026, 12, 7, 9, 0), BERLIN) == "Mon 2026-12-07 09:00 CET"
