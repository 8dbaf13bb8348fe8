"""The files folder (issue 36): content-addressed, private, checked on every read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from chatbot.store.blobs import BlobDamaged, BlobMissing, BlobStore, digest


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_are_0600_in_0700_folders_under_their_hash(tmp_path: Path) -> None:
    old = os.umask(0o022)  # a usual umask would make 0755 folders and 0644 files
    try:
        blobs = BlobStore(tmp_path / "files").open()
        sha, new = blobs.put(b"a screenshot's bytes")
    finally:
        os.umask(old)
    assert new and sha == digest(b"a screenshot's bytes")
    path = blobs.path(sha)
    assert path == tmp_path / "files" / sha[:2] / sha[2:4] / sha
    assert _mode(path) == 0o600
    assert [_mode(p) for p in (tmp_path / "files", path.parent.parent, path.parent)] == [0o700] * 3
    assert blobs.get(sha) == b"a screenshot's bytes"
    # Nothing else was left behind (no temporary file), and nothing outside the folder.
    assert [p.name for p in path.parent.iterdir()] == [sha]


def test_the_same_bytes_are_kept_once(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "files").open()
    first = blobs.put(b"x" * 1000)
    second = blobs.put(b"x" * 1000)
    assert first[0] == second[0] and (first[1], second[1]) == (True, False)
    blobs.put(b"y" * 500)
    assert blobs.total_size() == 1500


def test_a_read_checks_the_hash_and_a_missing_file_is_said(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "files").open()
    sha, _ = blobs.put(b"the original")
    blobs.path(sha).write_bytes(b"changed on disk")
    with pytest.raises(BlobDamaged):
        blobs.get(sha)
    assert blobs.delete(sha) and not blobs.delete(sha)
    with pytest.raises(BlobMissing):
        blobs.get(sha)
    with pytest.raises(ValueError):
        blobs.path("../../etc/passwd")


def test_a_wider_folder_is_made_private_and_stray_parts_go(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    stray = folder / "ab" / "cd" / ".part-123"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"half a file from a crash")
    BlobStore(folder).open()
    assert _mode(folder) == 0o700
    assert not stray.exists()
