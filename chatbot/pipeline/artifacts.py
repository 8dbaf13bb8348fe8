"""Files a builder's or fixer's report offers the owner (`Artifacts: shots/after.png`).

The agent is untrusted: the contract only lets plain relative paths through, and here
each one is opened inside the worktree without following a link anywhere, must be a
regular file within the size limit, and is kept by its bytes' own type. What cannot
be sent is named in the run's notice, not silently dropped; nothing about an artifact
ever fails the build.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chatbot.board import BoardError
from chatbot.board.file_kinds import NotTaken, identify
from chatbot.board.ports import WorkerSide

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Offered:
    kept: list[dict[str, object]]
    #: "path: why" for each artifact that could not be kept.
    skipped: list[str]


def _read_inside(root: Path, relative: str, limit: int) -> bytes:
    """The file's bytes, opened part by part with O_NOFOLLOW so that no link (in the
    path or at its end) leads out of the worktree."""
    flags = os.O_RDONLY | os.O_NOFOLLOW
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        parts = relative.split("/")
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
            os.close(folder)
            folder = inner
        handle = os.open(parts[-1], flags, dir_fd=folder)
    finally:
        os.close(folder)
    try:
        found = os.fstat(handle)
        if not stat.S_ISREG(found.st_mode):
            raise OSError("not a regular file")
        if found.st_size > limit:
            raise OSError(f"{found.st_size} bytes, more than the {limit} allowed")
        with os.fdopen(handle, "rb", closefd=False) as reading:
            return reading.read(limit + 1)
    finally:
        os.close(handle)


def _words(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "a symbolic link, not followed"
    if error.errno == errno.ENOTDIR:
        return "a link or a file where a folder should be, not followed"
    return error.strerror or str(error)


async def keep(
    board: WorkerSide, worktree: Path, paths: Sequence[str], *, limit: int, max_pixels: int
) -> Offered:
    kept: list[dict[str, object]] = []
    skipped: list[str] = []
    for relative in paths:
        try:
            data = _read_inside(worktree, relative, limit)
            if len(data) > limit:
                raise OSError(f"more than the {limit} bytes allowed")
            found = identify(data, max_pixels=max_pixels)
            attachment = await board.files.keep_outgoing(
                data, name=Path(relative).name, content_type=found.content_type
            )
        except FileNotFoundError:
            skipped.append(f"{relative}: not in the worktree")
        except OSError as error:
            skipped.append(f"{relative}: {_words(error)}")
        except (NotTaken, BoardError) as error:
            skipped.append(f"{relative}: {error}")
        else:
            kept.append({"id": attachment.id, "name": attachment.name, "size": attachment.size})
    for why in skipped:
        log.info("artifact not offered: %s", why)
    return Offered(kept, skipped)
