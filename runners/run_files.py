"""Files the owner sent for a run, put where its agent can read them and git never takes them.

A picture or a file sent in chat reaches a run as a file in its working folder, under
`FOLDER` (`<worktree>/.chatbot-files/`): pictures so that the CLI can send them to the
model as images (`RunRequest.images`), other files so that the prompt can name them.
The folder is the bot's, never part of the change:

- `place` writes the files under names made safe for every CLI's syntax and a shell
  (no separator, no leading dot or dash, nothing a shell, codex's comma-separated
  `--image` or gemini's `@path` could read as more), readable by the bot's user only;
- `exclude_from_git` lists the folder in the repository's `info/exclude`, so neither
  `git status` nor the agent's own `git add -A` shows it;
- the builder's commit (`runners.workspace.commit_all`) leaves it out by `PATHSPEC`
  whatever the agent did: a `git add -f` of it, a `.gitignore` that un-ignores it.

The names of the sender are not trusted: they come from a chat message.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from runners.git_guard import SAFE_OPTIONS, Worktree, safe_env
from runners.gitcmd import WorkspaceError, run_git

FOLDER = ".chatbot-files"
#: What the repository's `info/exclude` gets: the folder at the top of every worktree.
EXCLUDE_LINE = f"/{FOLDER}/"
#: Leaves the folder out of a git command that takes pathspecs (from the worktree's top).
PATHSPEC = f":(top,exclude){FOLDER}"
#: The folder itself as a pathspec, from the worktree's top.
FOLDER_PATHSPEC = f":(top){FOLDER}"

#: A name's bound in UTF-8 bytes (file systems allow 255), its extension's in characters.
MAX_NAME_BYTES = 120
MAX_SUFFIX_CHARS = 16
FALLBACK_NAME = "file"

# Kept as they are: letters and digits of any script, and these. Everything else (spaces,
# quotes, `$`, `;`, `*`, `,`, `@`, `%`, control and format characters...) becomes "_".
_KEPT_MARKS = frozenset("._-+")
_RUNS = re.compile(r"_{2,}")
# Not at either end of a name: a leading dot hides a file, a leading dash reads as an option.
_TRIMMED = "._-+"


def safe_name(name: str) -> str:
    """`name` (a sender's file name) as a plain file name: its last path part only,
    characters outside letters, digits and `._-+` replaced, no leading dot or dash,
    bounded in length with its extension kept. Never empty."""
    name = unicodedata.normalize("NFC", name)
    # A sender may name a path ("../../x", "C:\\x"): only its last part is a name.
    name = re.split(r"[/\\]", name)[-1]
    kept = "".join(ch if ch.isalnum() or ch in _KEPT_MARKS else "_" for ch in name)
    kept = _RUNS.sub("_", kept).lstrip(_TRIMMED)
    stem, dot, suffix = kept.rpartition(".")
    if not dot or not stem or len(suffix) > MAX_SUFFIX_CHARS:
        stem, suffix = kept, ""
    suffix = suffix.strip(_TRIMMED)
    stem = stem.rstrip(_TRIMMED) or FALLBACK_NAME
    return _bounded(stem, f".{suffix}" if suffix else "")


def _bounded(stem: str, suffix: str, tail: str = "") -> str:
    """stem + tail + suffix within MAX_NAME_BYTES, the stem cut (never inside a character)."""
    room = MAX_NAME_BYTES - len((tail + suffix).encode())
    cut = stem.encode()[:room].decode("utf-8", "ignore").rstrip(_TRIMMED) or FALLBACK_NAME
    return f"{cut}{tail}{suffix}"


def place(folder: Path, files: Sequence[tuple[str, bytes]]) -> tuple[Path, ...]:
    """Write each (name, content) into `folder` (made, mode 0700) under a safe unique name,
    mode 0600; returns their absolute paths, in order.

    A name taken already (by an earlier file or one of these) gets a number: `shot-2.png`.
    The folder must not be a symbolic link, nor any file in it: a run's agent could have
    put one there to have the bot write elsewhere (`WorkspaceError`).
    """
    folder = folder.absolute()
    _make_folder(folder)
    try:
        handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise WorkspaceError(f"cannot open {folder}: {error.strerror or error}") from None
    try:
        return tuple(folder / _write_new(handle, name, content) for name, content in files)
    finally:
        os.close(handle)


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(mode=0o700, parents=False, exist_ok=True)
    except FileNotFoundError:
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError as error:
        raise WorkspaceError(f"cannot make {folder}: {error.strerror or error}") from None
    found = os.lstat(folder)
    if not stat.S_ISDIR(found.st_mode):
        raise WorkspaceError(f"{folder} is not a folder (a link or a file took its place)")
    if stat.S_IMODE(found.st_mode) != 0o700:
        os.chmod(folder, 0o700)


def _write_new(folder: int, name: str, content: bytes) -> str:
    """Create the file under the first free variant of the safe name; returns the name."""
    wanted = safe_name(name)
    stem, dot, suffix = wanted.rpartition(".")
    if not dot:
        stem, suffix = wanted, ""
    suffix = f".{suffix}" if suffix else ""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for number in range(1, 10_000):
        candidate = wanted if number == 1 else _bounded(stem, suffix, f"-{number}")
        try:
            fd = os.open(candidate, flags, 0o600, dir_fd=folder)
        except FileExistsError:
            continue
        except OSError as error:
            raise WorkspaceError(f"cannot write {candidate}: {error.strerror or error}") from None
        try:
            os.fchmod(fd, 0o600)  # the umask may have taken more than asked
            with os.fdopen(fd, "wb", closefd=False) as out:
                out.write(content)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(candidate, dir_fd=folder)
            raise
        finally:
            os.close(fd)
        return candidate
    raise WorkspaceError(f"no free name for {wanted} in {FOLDER}")


async def exclude_from_git(worktree: Path | Worktree) -> bool:
    """List `FOLDER` in the repository's `info/exclude` (once); False when `worktree` is
    not in a git repository (the intake planner's folder), True otherwise.

    Given the `Worktree` the bot made, git's folder is the one the repository keeps for
    it, not whatever the worktree's `.git` link names now (a run could have rewritten
    it); the file is never followed through a symbolic link either way.
    """
    if isinstance(worktree, Worktree):
        cwd, env = worktree.path, safe_env(worktree)
    else:
        cwd, env = worktree, None
    found = await run_git(
        cwd, *SAFE_OPTIONS, "rev-parse", "--git-path", "info/exclude", env=env, check=False
    )
    if found.code != 0 or not found.out.strip():
        return False
    path = Path(found.out.strip())
    path = path if path.is_absolute() else cwd / path
    _append_once(path, EXCLUDE_LINE)
    return True


def _append_once(path: Path, line: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise WorkspaceError(f"cannot open {path}: {error.strerror or error}") from None
    with os.fdopen(fd, "r+b") as handle:
        text = handle.read().decode("utf-8", "replace")
        if line in (entry.strip() for entry in text.splitlines()):
            return
        separator = "" if not text or text.endswith("\n") else "\n"
        handle.write(f"{separator}{line}\n".encode())
