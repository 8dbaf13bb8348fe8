"""Quiet hours: a daily span of the bot's local time in which nobody is mentioned.

Times are epoch seconds handed in by the caller (no clock is read here), so tests
pass any moment they like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time

PATTERN = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$")


def problem(value: str) -> str | None:
    """Why `value` is no span of quiet hours, in words for the configuration's reader."""
    found = PATTERN.match(value)
    if found is None:
        return f'{value!r} is not a span like "22:00-07:00" (24-hour HH:MM-HH:MM)'
    if found.group(1, 2) == found.group(3, 4):
        return f"{value!r} starts and ends at the same time; leave the key out for no quiet hours"
    return None


@dataclass(frozen=True)
class QuietHours:
    start: time
    end: time

    @classmethod
    def parse(cls, value: str) -> QuietHours:
        if (why := problem(value)) is not None:
            raise ValueError(why)
        found = PATTERN.match(value)
        assert found is not None
        h1, m1, h2, m2 = (int(part) for part in found.groups())
        return cls(time(h1, m1), time(h2, m2))

    @property
    def wraps(self) -> bool:
        return self.start > self.end

    def is_quiet(self, now: float) -> bool:
        moment = datetime.fromtimestamp(now).time()
        if self.wraps:
            return moment >= self.start or moment < self.end
        return self.start <= moment < self.end
