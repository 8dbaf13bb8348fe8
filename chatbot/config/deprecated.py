"""Keys an earlier release accepted and this one no longer uses: one table, kept until
the next major version.

An upgrade must never turn a working configuration into exit 2. A key in the table
is taken out of the file's data before validation, and the bot starts with a warning
that names what replaces it: in the log, in `chatbot check` under "deprecated", and
once in the rooms to the owners (notify/deprecations.py). Strict validation stays for
everything else, so a typo is still refused with the key it meant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The release from which a key in the table stops the bot again.
REMOVED_IN = "1.0.0"

_FIXER_LANE = (
    "the fixer runs with the card's lane profile: set it in [lanes.<name>] {key}; "
    "[roles.fixer] keeps only approvals"
)


@dataclass(frozen=True)
class Removed:
    #: Dotted key as written in the file.
    key: str
    #: The release that stopped using it.
    since: str
    #: What to write instead, for a person editing the file.
    instead: str


REMOVED: tuple[Removed, ...] = (
    *(
        Removed(f"roles.fixer.{key}", "0.1.0", _FIXER_LANE.format(key=key))
        for key in ("runtime", "model", "reasoning_effort", "timeout_s", "idle_timeout_s")
    ),
)


@dataclass(frozen=True)
class Deprecated:
    """A deprecated key found in a configuration file (its value was ignored)."""

    key: str
    since: str
    instead: str

    def line(self) -> str:
        return (
            f"{self.key} is deprecated since {self.since} and ignored: {self.instead} "
            f"(from {REMOVED_IN} it stops the bot)"
        )


def set_aside(data: dict[str, Any]) -> tuple[Deprecated, ...]:
    """Take every deprecated key out of `data` (parsed TOML, changed in place); what was
    found, in the table's order. A section left empty is removed with it."""
    found = []
    for removed in REMOVED:
        *path, last = removed.key.split(".")
        parents = [data]
        for part in path:
            section = parents[-1].get(part)
            if not isinstance(section, dict):
                break
            parents.append(section)
        else:
            if last in parents[-1]:
                del parents[-1][last]
                found.append(Deprecated(removed.key, removed.since, removed.instead))
                _drop_empty(parents, path)
    return tuple(found)


def _drop_empty(parents: list[dict[str, Any]], path: list[str]) -> None:
    # An emptied [roles.fixer] would otherwise stand for a section set on purpose.
    for parent, part in zip(reversed(parents[:-1]), reversed(path), strict=True):
        if parent[part]:
            return
        del parent[part]
