"""Write-scope patterns: their meaning, their allowed shape, and when two overlap.

Meaning (`path_in_scope`, stated in the operator prompt too): patterns are
relative to the repository root and split at `/`; `*`, `?` and `[...]` match
within one path segment, `**` as a whole segment matches any number of
segments, letters compare case-insensitively (file systems may), and a pattern
also covers everything below what it matches (`src/app` may name a directory).

Two children that may write the same file must run one after the other, so the
overlap test has to be sound: it may say "overlap" for patterns that never touch
a common path, never the other way round. It therefore knows a wildcard segment
only by its literal prefix and suffix (and counts `{` `}` as wildcards, in case
someone reads them as brace alternatives): two such segments are disjoint only
when those affixes cannot both hold.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

MAX_SCOPE_CHARS = 200
MAX_SCOPE_SEGMENTS = 32

_SPECIAL = frozenset("*?[]{}")
_FORBIDDEN_RE = re.compile(r"[\x00-\x1f\x7f\\]")
_DRIVE_RE = re.compile(r"^[A-Za-z]:")


def write_scope_problem(pattern: str) -> str | None:
    """Why `pattern` is not an acceptable write scope, or None when it is."""
    if not pattern.strip():
        return "must not be empty"
    if pattern != pattern.strip():
        return "must not start or end with whitespace"
    if len(pattern) > MAX_SCOPE_CHARS:
        return f"longer than {MAX_SCOPE_CHARS} characters"
    if _FORBIDDEN_RE.search(pattern):
        return "must not contain control characters or backslashes"
    if pattern.startswith(("/", "~")) or _DRIVE_RE.match(pattern):
        return "must be relative to the repository root, not absolute"
    if pattern.startswith("!"):
        return "negated patterns are not allowed"
    segments = _segments(pattern)
    if len(segments) > MAX_SCOPE_SEGMENTS:
        return f"more than {MAX_SCOPE_SEGMENTS} path segments"
    for segment in segments:
        if segment == "":
            return "must not contain empty path segments ('//')"
        if segment == "..":
            return "must not contain '..'"
        if segment == ".":
            return "must not contain '.' segments"
        if "**" in segment and segment != "**":
            return "'**' must be a whole path segment"
    return None


def _segments(pattern: str) -> list[str]:
    # One trailing slash is the usual way to say "this directory"; it adds nothing
    # here because every pattern already covers what lies below it.
    trimmed = pattern[:-1] if pattern.endswith("/") and len(pattern) > 1 else pattern
    return trimmed.split("/")


def _affixes(segment: str) -> tuple[str, str] | None:
    """(literal prefix, literal suffix) of a wildcard segment; None for a literal one."""
    positions = [index for index, char in enumerate(segment) if char in _SPECIAL]
    if not positions:
        return None
    return segment[: positions[0]], segment[positions[-1] + 1 :]


def _segments_may_match(left: str, right: str) -> bool:
    left, right = left.casefold(), right.casefold()
    left_affixes, right_affixes = _affixes(left), _affixes(right)
    if left_affixes is None and right_affixes is None:
        return left == right
    if left_affixes is None:
        left, right = right, left
        left_affixes, right_affixes = right_affixes, left_affixes
    assert left_affixes is not None
    prefix, suffix = left_affixes
    if right_affixes is None:
        return right.startswith(prefix) and right.endswith(suffix)
    other_prefix, other_suffix = right_affixes
    prefixes_agree = prefix.startswith(other_prefix) or other_prefix.startswith(prefix)
    suffixes_agree = suffix.endswith(other_suffix) or other_suffix.endswith(suffix)
    return prefixes_agree and suffixes_agree


def scopes_overlap(left: str, right: str) -> bool:
    """Can some path lie inside both patterns? True when in doubt."""
    a = tuple(_segments(left)) + ("**",)
    b = tuple(_segments(right)) + ("**",)
    memo: dict[tuple[int, int], bool] = {}

    def overlap(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(a) or j == len(b):
            result = all(segment == "**" for segment in a[i:] + b[j:])
        elif a[i] == "**":
            # `**` matches nothing here, or swallows the other side's next segment.
            result = overlap(i + 1, j) or overlap(i, j + 1)
        elif b[j] == "**":
            result = overlap(i, j + 1) or overlap(i + 1, j)
        else:
            result = _segments_may_match(a[i], b[j]) and overlap(i + 1, j + 1)
        memo[(i, j)] = result
        return result

    return overlap(0, 0)


def path_in_scope(path: str, pattern: str) -> bool:
    """Does the repository-relative `path` lie inside `pattern` (meaning as above)?"""
    parts = tuple(segment.casefold() for segment in path.strip("/").split("/"))
    segments = tuple(segment.casefold() for segment in _segments(pattern)) + ("**",)
    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        if (i, j) not in memo:
            if i == len(segments):
                result = j == len(parts)
            elif segments[i] == "**":
                result = match(i + 1, j) or (j < len(parts) and match(i, j + 1))
            else:
                result = (
                    j < len(parts) and fnmatchcase(parts[j], segments[i]) and match(i + 1, j + 1)
                )
            memo[(i, j)] = result
        return memo[(i, j)]

    return match(0, 0)
