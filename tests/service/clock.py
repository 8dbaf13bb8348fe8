"""A clock a test sets, and moments in the bot's local time: what the reminder and
digest tests share."""

from __future__ import annotations

from datetime import datetime, timedelta


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def local(days: int, hour: int, minute: int = 0) -> float:
    """A moment in the bot's local time, `days` after today."""
    day = datetime.now().date() + timedelta(days=days)
    return datetime(day.year, day.month, day.day, hour, minute).timestamp()
