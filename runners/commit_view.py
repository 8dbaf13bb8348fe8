"""Read-only git for the views of a card's change (diff_files.py).

Bounded in time and size: a commit of a generated lock file must not fill the
bot's memory or a chat room. The target repository's own diff
drivers and text conversions are commands from its config, so they stay off.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from runners.process import Outcome, ProcessLimits, default_base_env, run_process

# git stops at the cap; what it printed so far is what we show.
OUTPUT_CAP = 256 * 1024


class CommitViewError(Exception):
    """The commit cannot be shown (not in the repository, git missing or failing)."""


@dataclass(frozen=True, slots=True)
class _Output:
    out: str
    cut: bool


async def git_output(repo: Path, *args: str, cap: int = OUTPUT_CAP) -> _Output:
    """What a read-only git command prints, cut at `cap` bytes (then `cut` is set)."""
    limits = ProcessLimits(timeout=20.0, idle_timeout=None, output_cap=cap)
    env = default_base_env()
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    try:
        result = await run_process(("git", *args), cwd=repo, base_env=env, limits=limits)
    except NotADirectoryError as error:
        raise CommitViewError(f"the repository is not there: {repo}") from error
    if result.outcome is Outcome.NOT_FOUND:
        raise CommitViewError("git is not installed")
    if result.outcome is Outcome.OUTPUT_CAP:
        return _Output(result.stdout, cut=True)
    if result.outcome is not Outcome.OK:
        detail = (result.stderr_tail or result.error or "").strip().splitlines()
        raise CommitViewError(detail[-1] if detail else "git show failed")
    return _Output(result.stdout, cut=False)
