"""Codex's words for a spent quota or rate limit, read into `Limited`.

Measured with the pinned codex against a provider answering 429 as OpenAI's APIs do
(tests/realcli/capture_quota.py, tests/runners/data/quota/): codex ends the turn with
`turn.failed` (`exec`) or a failed `turn/completed` (app-server) whose message is one of

- "You’ve hit your usage limit. ... or try again at Jan 1st, 2030 12:00 AM." (a plan's
  usage limit, `usage_limit_reached` with `resets_at`; the time is codex's local time);
- "Quota exceeded. Check your plan and billing details." (`insufficient_quota`);
- "exceeded retry limit, last status: 429 Too Many Requests" (a rate limit that outlasted
  its own retries; codex waits for `retry-after` but does not print it).
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta

from runners.runtimes.base import Limited, clean_detail

_USAGE_LIMIT = re.compile(r"you['’]ve hit your usage limit", re.IGNORECASE)
_QUOTA = re.compile(r"\bquota exceeded\b", re.IGNORECASE)
_TOO_MANY = re.compile(r"\b429\b.*too many requests|rate limit (?:reached|exceeded)", re.I)
# "try again at Jan 1st, 2030 12:00 AM" or, within the day, "try again at 3:15 PM".
_AT_DATE = re.compile(
    r"try again at ([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th)?, (\d{4}) (\d{1,2}):(\d{2}) ([AP]M)",
    re.IGNORECASE,
)
_AT_TIME = re.compile(r"try again at (\d{1,2}):(\d{2}) ([AP]M)", re.IGNORECASE)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def limited(message: str, now: float | None = None) -> Limited | None:
    """The limit a failed turn's message names, with its reset time where codex gave one."""
    if _USAGE_LIMIT.search(message):
        return Limited(clean_detail(message), _reset_at(message, now))
    if _QUOTA.search(message) or _TOO_MANY.search(message):
        return Limited(clean_detail(message))
    return None


def _hour(hour: str, half: str) -> int:
    return int(hour) % 12 + (12 if half == "PM" else 0)


def _reset_at(message: str, now: float | None) -> float | None:
    found = _AT_DATE.search(message)
    if found and found[1].title() in _MONTHS:
        month, day, year, hour, minute, half = found.groups()
        try:
            at = datetime(
                int(year),
                _MONTHS.index(month.title()) + 1,
                int(day),
                _hour(hour, half.upper()),
                int(minute),
            )
        except ValueError:
            return None
        return at.timestamp()  # naive: local time, as codex printed it
    found = _AT_TIME.search(message)
    if found:
        today = datetime.fromtimestamp(time.time() if now is None else now)
        try:
            at = today.replace(
                hour=_hour(found[1], found[3].upper()), minute=int(found[2]), second=0
            )
        except ValueError:
            return None
        if at < today:
            at += timedelta(days=1)
        return at.timestamp()
    return None
