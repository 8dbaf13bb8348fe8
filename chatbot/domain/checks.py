"""What the repository's checks of a card's commit allow, as rules over the record the
pipeline keeps in the card's data (`checks`: commit, command, verdict, duration_s,
exit_code, tail).

A commit goes on to its review when its checks passed or the owner skipped them once;
it is deployed only when they passed on exactly that commit, unless the owner says
`--skip-checks` in the /deploy command itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

GOOD_VERDICTS = frozenset({"passed", "skipped"})
SKIP_FLAG = "--skip-checks"
Record = TypeVar("Record", bound=Mapping[str, Any])


def record_of(record: Record | None, commit: str | None) -> Record | None:
    """The card's checks record (its data's `checks`) if it is of `commit`, or None:
    none ran on it."""
    if record is not None and commit and record.get("commit") == commit:
        return record
    return None


def shown(record: Mapping[str, Any]) -> str:
    """One line: 'passed in 12.3 s (make test)'."""
    command = " ".join(str(arg) for arg in record.get("command") or ())
    return f"{record.get('verdict')} in {float(record.get('duration_s') or 0):.1f} s ({command})"


def deploy_held(record: Mapping[str, Any] | None, commit: str | None) -> str | None:
    """What holds this commit from a deploy without the owner's --skip-checks ("failed in
    3.1 s (make test)", "did not run on it"), or None: nothing.

    A card whose commit was made with no checks set carries no record: nothing holds it."""
    if record is None:
        return None
    if record.get("commit") == commit and record.get("verdict") == "passed":
        return None
    return shown(record) if record.get("commit") == commit else "did not run on it"


def deploy_refusal(record: Mapping[str, Any] | None, slug: str, commit: str | None) -> str | None:
    """Why /deploy must refuse this commit without the owner's --skip-checks, or None."""
    said = deploy_held(record, commit)
    if said is None:
        return None
    return (
        f"card '{slug}': the checks of commit {(commit or '')[:12]} did not pass ({said}); "
        f"/deploy {slug} {SKIP_FLAG} deploys it anyway"
    )
