"""When a routine runs: a cron expression or plain words, in a time zone.

`parse(when, zone, now, once=...)` reads what an owner wrote after /every or /at:
five cron fields ("0 9 * * 1-5") or words ("weekdays 09:00", "monday 9am",
"every day 18:30", "tomorrow 02:00", "2026-12-24 18:00"). Cron expressions are
read and stepped by cronsim (a well-kept parser: it knows the day-of-month/day-of-
week "or" rule and steps local wall-clock time across daylight-saving changes);
only the few words are translated here, into cron fields or one moment.

Times are epoch seconds handed in by the caller (no clock is read here), so tests
pass any moment they like; a wall-clock time is always read in the routine's zone.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from datetime import date as date_
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from cronsim import CronSim, CronSimError

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Cron numbers Sunday 0; Python's weekday() Monday 0.
_CRON_DAY = {name: (i + 1) % 7 for i, name in enumerate(DAYS)}
_SHORT = {name[:3]: name for name in DAYS}
_TIME = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$")
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_CRON_FIELD = re.compile(r"^[\d*/,\-A-Za-z?LW#]+$")
#: How far ahead a recurring schedule's next time is looked for (Feb 30 never comes).
HORIZON_DAYS = 366 * 5


# What is wrong with a time, naming the fix, in English and German (`locale = "de"`).
# The words a schedule is written in ("weekdays", "tomorrow") are read in English only,
# so the German sentences quote them as they must be typed.
TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "no_zone": '{zone!r} is no time zone; write an IANA name such as "Europe/Berlin" or "UTC"',
        "no_when": 'say when: a time such as "weekdays 09:00" or cron fields',
        "rhythm_for_at": '"{when}" is a rhythm; /at runs once: write a day ("tomorrow 02:00", '
        '"monday 9am") or use /every for "{when}"',
        "moment_for_every": '"{when}" is one moment; /every needs a rhythm ("every day 18:30", '
        '"weekdays 09:00") or use /at "{when}"',
        "cron_for_at": '"{when}" is a cron rhythm; /at runs once ("tomorrow 02:00"): '
        "use /every for it",
        "bad_cron": '"{when}" is no cron expression ({error}): five fields, minute 0-59, '
        'hour 0-23, day 1-31, month 1-12, weekday 0-6, such as "0 9 * * 1-5"',
        "never": '"{when}" never comes: check its day and month',
        "no_time": '"{word}" is no time of day: write "09:00", "9am" or "18:30"',
        "no_time_half": '"{word}" is no time of day: 1am to 12pm, or 24-hour "13:00"',
        "no_time_range": '"{word}" is no time of day: hours 0-23, minutes 0-59',
        "yesterday": '"{text}" is in the past: write "today 18:00" or "tomorrow 02:00"',
        "unreadable": '"{text}" is not a time I can read: write "weekdays 09:00", "monday 9am", '
        '"every day 18:30", "tomorrow 02:00" or five cron fields ("0 9 * * 1-5")',
        "no_date": '"{head}" is no date: write YYYY-MM-DD',
        "no_day": '"{head}" is not a day I can read: write "weekdays", "monday", "every day", '
        '"today", "tomorrow", a date (2026-12-24) or five cron fields ("0 9 * * 1-5")',
        "past": '"{text}" is in the past: write a later time, or "{later}"',
    },
    "de": {
        "no_zone": "{zone!r} ist keine Zeitzone; schreibe einen IANA-Namen wie "
        '"Europe/Berlin" oder "UTC"',
        "no_when": 'sag, wann: eine Zeit wie "weekdays 09:00" oder Cron-Felder',
        "rhythm_for_at": '"{when}" ist ein Rhythmus; /at läuft einmal: schreibe einen Tag '
        '("tomorrow 02:00", "monday 9am") oder nimm /every für "{when}"',
        "moment_for_every": '"{when}" ist ein einzelner Zeitpunkt; /every braucht einen Rhythmus '
        '("every day 18:30", "weekdays 09:00") oder nimm /at "{when}"',
        "cron_for_at": '"{when}" ist ein Cron-Rhythmus; /at läuft einmal ("tomorrow 02:00"): '
        "nimm /every dafür",
        "bad_cron": '"{when}" ist kein Cron-Ausdruck ({error}): fünf Felder, Minute 0-59, '
        'Stunde 0-23, Tag 1-31, Monat 1-12, Wochentag 0-6, etwa "0 9 * * 1-5"',
        "never": '"{when}" kommt nie: prüfe Tag und Monat',
        "no_time": '"{word}" ist keine Uhrzeit: schreibe "09:00", "9am" oder "18:30"',
        "no_time_half": '"{word}" ist keine Uhrzeit: 1am bis 12pm, oder 24 Stunden wie "13:00"',
        "no_time_range": '"{word}" ist keine Uhrzeit: Stunden 0-23, Minuten 0-59',
        "yesterday": '"{text}" liegt in der Vergangenheit: schreibe "today 18:00" oder '
        '"tomorrow 02:00"',
        "unreadable": '"{text}" kann ich nicht als Zeit lesen: schreibe "weekdays 09:00", '
        '"monday 9am", "every day 18:30", "tomorrow 02:00" oder fünf Cron-Felder '
        '("0 9 * * 1-5")',
        "no_date": '"{head}" ist kein Datum: schreibe JJJJ-MM-TT, etwa 2026-12-24',
        "no_day": '"{head}" kann ich nicht als Tag lesen: schreibe "weekdays", "monday", '
        '"every day", "today", "tomorrow", ein Datum (2026-12-24) oder fünf Cron-Felder '
        '("0 9 * * 1-5")',
        "past": '"{text}" liegt in der Vergangenheit: schreibe eine spätere Zeit oder "{later}"',
    },
}


class ScheduleError(ValueError):
    """Why `when` is no schedule, in words that name the fix: English as the error's
    text (logs, the configuration's checks), any language by `said(locale)`."""

    def __init__(self, key: str, **params: object):
        self.key = key
        self.params = params
        super().__init__(self.said("en"))

    def said(self, locale: str) -> str:
        return TEXTS.get(locale, TEXTS["en"])[self.key].format(**self.params)


@dataclass(frozen=True)
class Schedule:
    #: What the owner wrote, kept to show.
    when: str
    zone: str
    #: Five cron fields for a recurring routine; None for one moment.
    cron: str | None = None
    #: The one moment (epoch seconds) of a one-time routine.
    at: float | None = None

    @property
    def recurring(self) -> bool:
        return self.cron is not None

    def next_after(self, moment: float) -> float | None:
        """The first time strictly after `moment`; None when there is none."""
        if self.cron is None:
            return self.at if self.at is not None and self.at > moment else None
        tz = ZoneInfo(self.zone)
        start = datetime.fromtimestamp(moment, tz)
        try:
            found = next(CronSim(self.cron, start))
        except StopIteration:
            return None
        if found - start > timedelta(days=HORIZON_DAYS):
            return None
        return found.timestamp()

    def between(self, after: float, until: float, limit: int = 1000) -> list[float]:
        """The times in (after, until], oldest first, at most `limit` (the newest kept)."""
        found: list[float] = []
        moment = after
        while (following := self.next_after(moment)) is not None and following <= until:
            found.append(following)
            moment = following
            if len(found) > limit:
                found.pop(0)
        return found


def zone_problem(zone: str, locale: str = "en") -> str | None:
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return ScheduleError("no_zone", zone=zone).said(locale)
    return None


@functools.cache
def _zones_by_lower() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


def canonical_zone(name: str) -> str | None:
    """`name` as the zone database spells it (a phone writes "europe/berlin"); None when
    there is no such zone."""
    name = name.strip()
    found = _zones_by_lower().get(name.lower())
    if found is not None:
        return found
    return name if name and zone_problem(name) is None else None


def parse(when: str, zone: str, now: float, *, once: bool) -> Schedule:
    """`when` as a schedule (once: for /at, one moment; else for /every, a rhythm)."""
    if zone_problem(zone) is not None:
        raise ScheduleError("no_zone", zone=zone)
    text = " ".join(when.lower().replace(" at ", " ").split())
    if not text:
        raise ScheduleError("no_when")
    fields = text.split()
    if len(fields) == 5 and all(_CRON_FIELD.match(f) for f in fields) and not _TIME.match(text):
        return _cron(when, zone, text, now, once)
    words = text.removeprefix("every ").strip()
    found = _words(words, zone, now, once)
    if found.recurring and once:
        raise ScheduleError("rhythm_for_at", when=when)
    if not found.recurring and not once:
        raise ScheduleError("moment_for_every", when=when)
    return Schedule(when, zone, found.cron, found.at)


def _cron(when: str, zone: str, text: str, now: float, once: bool) -> Schedule:
    if once:
        raise ScheduleError("cron_for_at", when=when)
    try:
        CronSim(text, datetime.fromtimestamp(now, ZoneInfo(zone)))
    except CronSimError as error:
        raise ScheduleError("bad_cron", when=when, error=error) from error
    schedule = Schedule(when, zone, text)
    if schedule.next_after(now) is None:
        raise ScheduleError("never", when=when)
    return schedule


def _clock(word: str) -> tuple[int, int]:
    if word == "noon":
        return 12, 0
    if word == "midnight":
        return 0, 0
    found = _TIME.match(word)
    if found is None:
        raise ScheduleError("no_time", word=word)
    hour, minute, half = int(found.group(1)), int(found.group(2) or 0), found.group(3)
    if half is not None:
        if not 1 <= hour <= 12:
            raise ScheduleError("no_time_half", word=word)
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        raise ScheduleError("no_time_range", word=word)
    return hour, minute


def _day(word: str) -> str | None:
    word = word.removesuffix("s") if word not in ("weekdays", "weekends") else word
    return word if word in DAYS else _SHORT.get(word)


def _words(text: str, zone: str, now: float, once: bool) -> Schedule:
    parts = text.split()
    if "yesterday" in parts:
        raise ScheduleError("yesterday", text=text)
    # A time alone is for today (or tomorrow if it has passed) with /at, daily with /every.
    head, rest = (parts[0], parts[1:]) if len(parts) > 1 else ("day" if not once else "", parts)
    if len(rest) != 1:
        raise ScheduleError("unreadable", text=text)
    hour, minute = _clock(rest[0])
    cron_day = {"day": "*", "daily": "*", "weekdays": "1-5", "weekday": "1-5"}
    cron_day |= {"weekends": "6,0", "weekend": "6,0"}
    tz = ZoneInfo(zone)
    today = datetime.fromtimestamp(now, tz).date()
    if head in cron_day and not (once and head in ("day", "daily")):
        return Schedule(text, zone, f"{minute} {hour} * * {cron_day[head]}")
    if (day := _day(head)) is not None:
        if not once:
            return Schedule(text, zone, f"{minute} {hour} * * {_CRON_DAY[day]}")
        ahead = (DAYS.index(day) - today.weekday()) % 7
        return _moment(text, today + timedelta(days=ahead), hour, minute, tz, now, step=7)
    if head in ("", "today", "tonight"):
        return _moment(text, today, hour, minute, tz, now, step=1 if head == "" else 0)
    if head == "tomorrow":
        return _moment(text, today + timedelta(days=1), hour, minute, tz, now, step=0)
    if (found := _DATE.match(head)) is not None:
        try:
            year, month, day_of_month = (int(g) for g in found.groups())
            date = datetime(year, month, day_of_month).date()
        except ValueError as error:
            raise ScheduleError("no_date", head=head) from error
        return _moment(text, date, hour, minute, tz, now, step=0)
    raise ScheduleError("no_day", head=head)


def _moment(
    text: str, date: date_, hour: int, minute: int, tz: ZoneInfo, now: float, *, step: int
) -> Schedule:
    """One wall-clock moment in `tz`; `step` days later if it has passed (0: refused)."""
    moment = datetime(date.year, date.month, date.day, hour, minute, tzinfo=tz).timestamp()
    if moment <= now:
        if not step:
            later = f"tomorrow {hour:02d}:{minute:02d}"
            raise ScheduleError("past", text=text, later=later)
        date = date + timedelta(days=step)
        moment = datetime(date.year, date.month, date.day, hour, minute, tzinfo=tz).timestamp()
    return Schedule(text, tz.key, at=moment)


def local_words(moment: float, zone: str) -> str:
    """A moment as the owner reads it in the routine's zone: "Mon 2026-12-07 09:00 CET"."""
    local = datetime.fromtimestamp(moment, ZoneInfo(zone))
    return local.strftime("%a %Y-%m-%d %H:%M %Z")


def local_zone() -> str:
    """The host's zone name (TZ, /etc/timezone, /etc/localtime), else "UTC": the default
    of `[bot] timezone`, so a routine's "09:00" is the clock on the wall of the host."""
    candidates = [os.environ.get("TZ", "").removeprefix(":")]
    try:
        with open("/etc/timezone", encoding="utf-8") as file:
            candidates.append(file.read().strip())
    except OSError:
        pass
    try:
        target = os.path.realpath("/etc/localtime")
        candidates.append(target.partition("/zoneinfo/")[2])
    except OSError:
        pass
    return next((name for name in candidates if name and zone_problem(name) is None), "UTC")
