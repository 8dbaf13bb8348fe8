"""Kept files' bytes, content-addressed: `<folder>/ab/cd/abcd…` by SHA-256.

The same bytes are kept once, however often they are sent. The folders are the bot's
own (mode 0700) and every file is 0600: an attachment of an encrypted room is clear
text here and nowhere else (no /tmp: the temporary name lies beside the file's final
one, in the same folder). A file is written, fsynced and renamed into place, so a
crash leaves either the whole file or a stray temporary one (removed at the next
start), never half a file under its hash; a read checks the bytes against the hash.

Blocking file calls: the board runs these on a thread (asyncio.to_thread).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import uuid
from pathlib import Path

_HASH = re.compile(r"^[0-9a-f]{64}$")
_TEMPORARY = ".part-"


class BlobMissing(LookupError):
    """No file is kept under that hash (dropped, or removed by hand)."""


class BlobDamaged(ValueError):
    """The kept file's bytes no longer have its hash."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    def __init__(self, folder: Path):
        self.folder = folder

    def open(self) -> BlobStore:
        """Make the folder (0700, tightened if it was wider) and drop stray temporary files."""
        _private_folder(self.folder)
        for stray in self.folder.glob(f"*/*/{_TEMPORARY}*"):
            with contextlib.suppress(OSError):
                stray.unlink()
        return self

    def path(self, sha256: str) -> Path:
        if not _HASH.match(sha256):
            raise ValueError(f"not a SHA-256 hash: {sha256[:80]!r}")
        return self.folder / sha256[:2] / sha256[2:4] / sha256

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def put(self, data: bytes) -> tuple[str, bool]:
        """Keep `data`; (its hash, whether it was new). Kept bytes are not written twice."""
        sha256 = digest(data)
        target = self.path(sha256)
        if target.is_file():
            return sha256, False
        _private_folder(target.parent.parent)
        _private_folder(target.parent)
        temporary = target.parent / f"{_TEMPORARY}{uuid.uuid4().hex}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
        _sync_folder(target.parent)
        return sha256, True

    def get(self, sha256: str) -> bytes:
        """The bytes kept under `sha256`; BlobMissing or BlobDamaged."""
        try:
            fd = os.open(self.path(sha256), os.O_RDONLY | os.O_NOFOLLOW)
        except (FileNotFoundError, OSError) as error:
            raise BlobMissing(sha256) from error
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
        if digest(data) != sha256:
            raise BlobDamaged(f"the file kept as {sha256[:12]}… no longer has its hash")
        return data

    def delete(self, sha256: str) -> bool:
        """Remove the bytes kept under `sha256`; False when there were none."""
        try:
            self.path(sha256).unlink()
        except FileNotFoundError:
            return False
        return True

    def total_size(self) -> int:
        """Bytes of every kept file (what the folder holds, not what rows say)."""
        total = 0
        for path in self.folder.glob("*/*/*"):
            if _HASH.match(path.name):
                with contextlib.suppress(FileNotFoundError):
                    total += path.stat().st_size
        return total


def _private_folder(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = stat.S_IMODE(folder.stat().st_mode)
    if mode != 0o700:
        folder.chmod(0o700)  # the umask may have widened it, or someone did


def _sync_folder(folder: Path) -> None:
    """The rename itself survives a power cut only once the folder is synced."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
