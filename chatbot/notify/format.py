"""Formatting every message shares: one way to cut text, one way to say how long.

Text is cut without splitting a character as people see it (a combining mark,
a keycap, a skin tone, a zero-width-joiner sequence, a flag's pair of regional
indicators), at a line or word boundary where there is one nearby.
"""

from __future__ import annotations

import html
import unicodedata

# Code points that attach to the one before: ZWJ, variation selectors, keycap, skin tones.
_EXTENDERS = {"\u200d", "\ufe0e", "\ufe0f", "\u20e3", *map(chr, range(0x1F3FB, 0x1F400))}


def prefix(text: str, limit: int) -> str:
    """The longest prefix of at most `limit` characters that does not split a character.

    Python strings index code points, so no byte sequence can break; what can break
    is a character as people see it. Step back until the cut is between two.
    """
    end = min(limit, len(text))
    while 0 < end < len(text) and _joined(text, end):
        end -= 1
    return text[:end]


def cut(body: str, limit: int, tail: str = "") -> str:
    """Shorten to `limit` at a line or word boundary, never mid-character; `tail` says
    where the rest is (it is counted in the limit)."""
    if len(body) <= limit:
        return body
    room = max(0, limit - len(tail))
    clipped = prefix(body, room)
    boundary = max(clipped.rfind("\n"), clipped.rfind(" "))
    if boundary > room // 2:
        clipped = clipped[:boundary]
    return clipped.rstrip() + tail


def one_line(text: str, limit: int) -> str:
    """Text as one short line: whitespace collapsed, cut with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else prefix(line, limit - 1) + "…"


def duration(seconds: float) -> str:
    """How long, as people say it on a phone: 40s, 2m 05s, 1h 20m."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


def as_html(body: str) -> str:
    """Plain text as HTML for Matrix's formatted body: escaped, first line bold."""
    lines = html.escape(body).split("\n")
    if lines:
        lines[0] = f"<b>{lines[0]}</b>"
    return "<br>".join(lines)


def _joined(line: str, at: int) -> bool:
    """True when line[at] still belongs to the character before it."""
    here, before = line[at], line[at - 1]
    if unicodedata.combining(here) or here in _EXTENDERS or before == "\u200d":
        return True
    if _is_regional(here) and _is_regional(before):
        # Flags pair up from the start of a run of regional indicators.
        run = 0
        while at - run - 1 >= 0 and _is_regional(line[at - run - 1]):
            run += 1
        return run % 2 == 1
    return False


def _is_regional(char: str) -> bool:
    return "\U0001f1e6" <= char <= "\U0001f1ff"


def usd(amount: float) -> str:
    """Money as people read it in a room: two decimals, a cent's fraction where it matters."""
    return f"${amount:.2f}" if amount >= 0.1 or amount == 0 else f"${amount:.4f}"
