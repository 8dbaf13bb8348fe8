"""A small real file system (tmpfs) that a test can fill and free.

Nothing here fakes the failure: SQLite, the log handler and git meet a real
ENOSPC. Mounting needs root, as the test scripts have; where it is refused the
test fails with the reason (it never skips).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

CHUNK = 64 * 1024


@dataclass
class SmallDisk:
    path: Path

    @property
    def ballast(self) -> Path:
        return self.path / "ballast"

    def fill(self) -> None:
        """Take every free byte (down to the last block)."""
        fd = os.open(self.ballast, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in (CHUNK, 4096, 512, 1):
                while True:
                    try:
                        os.write(fd, b"\0" * size)
                    except OSError as error:
                        if error.errno != errno.ENOSPC:
                            raise
                        break
        finally:
            os.close(fd)
        assert self.free_bytes() < 4096, self.free_bytes()

    def free(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.ballast.unlink()

    def free_bytes(self) -> int:
        stat = os.statvfs(self.path)
        return stat.f_bavail * stat.f_frsize


def empty_wal(database: Path, within: float = 10.0) -> None:
    """Truncate the database's write-ahead log to nothing (a checkpoint any process may
    run). SQLite reuses a log's space after a checkpoint: a log that grew earlier could
    take the next write on a full disk without a new block, and the test would see no
    full disk at all."""
    # The timeout is SQLite's busy handler: it waits for the bot's readers to finish.
    with contextlib.closing(sqlite3.connect(database, timeout=within)) as conn:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert not busy, f"{database}: the write-ahead log stayed busy for {within}s"


@contextlib.contextmanager
def small_disk(parent: Path, size: str = "8m") -> Iterator[SmallDisk]:
    path = parent / f"small-disk-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.fail(f"cannot mount a small file system: {mounted.stderr.strip()}", pytrace=False)
    try:
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
        with contextlib.suppress(OSError):
            path.rmdir()
