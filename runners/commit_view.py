"""A commit as a phone can show it: its stat and the first lines of its diff.

Read-only git, bounded in time and size: a commit of a generated lock file must
not fill the bot's memory or a chat room. The target repository's own diff
drivers and text conversions are commands from its config, so they stay off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from runners.process import Outcome, ProcessLimits, default_base_env, run_process

_HASH_RE = re.compile(r"[0-9a-f]{7,64}")
# git stops at the cap; what it printed so far is what we show.
OUTPUT_CAP = 256 * 1024
_SAFE = ("-c", "core.quotepath=off", "show", "--no-color", "--no-ext-diff", "--no-textconv")


class CommitViewError(Exception):
    """The commit cannot be shown (not in the repository, git missing or failing)."""


@dataclass(frozen=True, slots=True)
class CommitDiff:
    commit: str
    #: "<short hash> <subject>", then git's --stat lines and summary.
    stat: str
    #: The first lines of the patch.
    patch: str
    #: Lines of the patch left out (or None when git's output itself was cut).
    lines_left: int | None


async def commit_diff(repo: Path, commit: str, *, max_lines: int = 60) -> CommitDiff:
    if not _HASH_RE.fullmatch(commit):
        raise CommitViewError(f"{commit!r} is not a commit hash")
    stat = await git_output(repo, *_SAFE, "--format=%h %s", "--stat=72,40", commit, "--")
    patch = await git_output(repo, *_SAFE, "--format=", "--patch", commit, "--")
    lines = patch.out.splitlines()
    shown = lines[:max_lines]
    left = None if patch.cut else len(lines) - len(shown)
    return CommitDiff(commit, stat.out.rstrip(), "\n".join(shown), left)


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
