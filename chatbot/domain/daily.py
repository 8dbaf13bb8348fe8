"""A time of the bot's local day (`[bot] digest_at`) and when it comes next.

Times are epoch seconds handed in by the caller (no clock is read here), so tests
pass any moment they like. A day is the local date written `YYYY-MM-DD`, as budgets
write it, so days compare as text.
"""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta

PATTERN = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def problem(value: str) -> str | None:
    """Why `value` is no time of day, in words for the configuration's reader."""
    if PATTERN.match(value) is None:
        return f'{value!r} is not a time like "09:00" (24-hour HH:MM, the bot\'s local time)'
    return None


def parse(value: str) -> time:
    if (why := problem(value)) is not None:
        raise ValueError(why)
    hour, minute = value.split(":")
    return time(int(hour), int(minute))


def day_of(now: float) -> str:
    return datetime.fromtimestamp(now).date().isoformat()


def due_at(at: time, last_day: str, now: float) -> float:
    """When the day's event is due: today at `at` unless today's was had already (then
    tomorrow's). A moment already past means now: one missed earlier today is caught
    up, but a day that passed without it is not (its successor covers it)."""
    today = datetime.fromtimestamp(now).date()
    if last_day >= today.isoformat():
        today += timedelta(days=1)
    return datetime.combine(today, at).timestamp()
