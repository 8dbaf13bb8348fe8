"""A card's change file by file, as a page shows it: what each file became (added,
deleted, renamed, mode changed, binary), its hunks, bounded.

Read-only git, the same guards as commit_view: no external diff driver, no text
conversion (commands from the repository's own config), a time and size cap. The
patch is the agent's work and untrusted: it is parsed as data, its lines are cut to a
length a page can carry, and bytes that are not UTF-8 are replaced, never executed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from runners.commit_view import CommitViewError, git_output

_HASH_RE = re.compile(r"[0-9a-f]{7,64}")
_DIFF = ("-c", "core.quotepath=off", "diff", "--no-color", "--no-ext-diff", "--no-textconv")
_HEADER = re.compile(r"^diff --git a/(.*) b/(.*)$")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
# A line of a patch longer than this is cut on the page (a minified file, a 10 MB line).
MAX_LINE_CHARS = 2_000
# Patch lines shown on the page in all; the rest is in the downloadable patch.
MAX_LINES = 3_000
# What git may print, for the page and for a download: a 10 MB generated line still
# leaves the files after it on the page (its lines are cut after reading).
PATCH_CAP = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class DiffLine:
    #: "+", "-", " ", "@" (a hunk header) or "\\" (no newline at end of file).
    kind: str
    text: str
    #: Its line number in the new file ("+" and " " lines), for comments on it.
    number: int | None = None
    #: Characters cut off its end.
    cut: int = 0


@dataclass(slots=True)
class FileChange:
    path: str
    #: "added", "deleted", "renamed", "copied" or "modified".
    status: str = "modified"
    old_path: str | None = None
    binary: bool = False
    old_mode: str | None = None
    new_mode: str | None = None
    lines: list[DiffLine] = field(default_factory=list)
    added: int = 0
    removed: int = 0
    #: Patch lines of this file not kept (over MAX_LINES in all).
    lines_left: int = 0


@dataclass(frozen=True, slots=True)
class CommitDiff:
    base: str
    commit: str
    files: tuple[FileChange, ...]
    #: git's own output was cut at the size cap: files after it are missing.
    cut: bool


def parse(patch: str, *, max_lines: int = MAX_LINES) -> list[FileChange]:
    """The files of a `git diff` patch, their lines kept up to `max_lines` in all."""
    files: list[FileChange] = []
    current: FileChange | None = None
    kept = 0
    number = 0
    in_hunk = False
    for raw in patch.splitlines():
        header = _HEADER.match(raw)
        if header:
            current = FileChange(path=header.group(2), old_path=header.group(1))
            files.append(current)
            in_hunk = False
            continue
        if current is None:
            continue
        if not in_hunk:
            if raw.startswith("new file mode "):
                current.status, current.new_mode = "added", raw.rsplit(" ", 1)[1]
            elif raw.startswith("deleted file mode "):
                current.status, current.old_mode = "deleted", raw.rsplit(" ", 1)[1]
            elif raw.startswith("old mode "):
                current.old_mode = raw.rsplit(" ", 1)[1]
            elif raw.startswith("new mode "):
                current.new_mode = raw.rsplit(" ", 1)[1]
            elif raw.startswith("rename from "):
                current.status, current.old_path = "renamed", raw[len("rename from ") :]
            elif raw.startswith("rename to "):
                current.path = raw[len("rename to ") :]
            elif raw.startswith("copy from "):
                current.status, current.old_path = "copied", raw[len("copy from ") :]
            elif raw.startswith("copy to "):
                current.path = raw[len("copy to ") :]
            elif raw.startswith("Binary files ") or raw == "GIT binary patch":
                current.binary = True
        hunk = _HUNK.match(raw)
        if hunk:
            in_hunk = True
            number = int(hunk.group(1))
            kind = "@"
        elif not in_hunk:
            continue
        elif raw.startswith("+"):
            kind = "+"
            current.added += 1
        elif raw.startswith("-"):
            kind = "-"
            current.removed += 1
        elif raw.startswith("\\"):
            kind = "\\"
        else:
            kind = " "
        if kept >= max_lines:
            current.lines_left += 1
        else:
            text = raw if kind in ("@", "\\") else raw[1:]
            cut = max(0, len(text) - MAX_LINE_CHARS)
            shown_number = number if kind in ("+", " ") else None
            current.lines.append(DiffLine(kind, text[:MAX_LINE_CHARS], shown_number, cut))
            kept += 1
        if kind in ("+", " "):
            number += 1
    for found in files:
        if found.status == "modified" and found.old_path == found.path:
            found.old_path = None
        if found.status in ("added", "deleted"):
            found.old_path = None
    return files


def is_hash(value: str) -> bool:
    return _HASH_RE.fullmatch(value) is not None


# Against its parent, or everything added for a first commit (which has none).
_DIFF_TREE = (
    "-c",
    "core.quotepath=off",
    "diff-tree",
    "--root",
    "--no-commit-id",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
)


def _checked(commit: str, base: str | None) -> None:
    """`base`: a hash, or a hash and `^` (its parent)."""
    if not is_hash(commit) or (base is not None and not is_hash(base.removesuffix("^"))):
        raise CommitViewError(f"{base or commit!r} is not a commit hash")


async def _patch(repo: Path, commit: str, base: str | None) -> tuple[str, str, bool]:
    _checked(commit, base)
    if base is None:
        args: tuple[str, ...] = (*_DIFF_TREE, "-M", "--patch", commit, "--")
    else:
        args = (*_DIFF, "-M", "--patch", base, commit, "--")
    output = await git_output(repo, *args, cap=PATCH_CAP)
    return base or f"{commit}^", output.out, output.cut


async def change_of(repo: Path, commit: str, base: str | None = None) -> CommitDiff:
    """The change from `base` (default: the commit's parent) to `commit`, file by file."""
    start, out, cut = await _patch(repo, commit, base)
    return CommitDiff(start, commit, tuple(parse(out)), cut)


async def patch_of(repo: Path, commit: str, base: str | None = None) -> tuple[str, bool]:
    """The whole patch as git writes it (for a download), and whether the cap cut it."""
    _, out, cut = await _patch(repo, commit, base)
    return out, cut
