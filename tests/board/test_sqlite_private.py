"""The board's SQLite files are the bot user's alone (issue 32): made 0600, and the
WAL and shared-memory files SQLite makes beside it take the same mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from chatbot.store.db import Store


async def test_a_new_board_file_and_its_wal_are_readable_by_the_bots_user_only(
    tmp_path: Path,
) -> None:
    old = os.umask(0o022)  # what a shell gives `chatbot run` by default
    try:
        store = await Store.open(tmp_path / "board.sqlite3")
    finally:
        os.umask(old)
    try:
        files = sorted(tmp_path.glob("board.sqlite3*"))
        assert files and files[0].name == "board.sqlite3"
        assert any(f.name.endswith("-wal") for f in files), files
        for file in files:
            assert stat.S_IMODE(file.stat().st_mode) == 0o600, (file, oct(file.stat().st_mode))
    finally:
        await store.close()


async def test_a_backup_and_a_restored_board_are_the_bots_users_alone(tmp_path: Path) -> None:
    from chatbot.store.backup import restore_sqlite, snapshot_sqlite

    store = await Store.open(tmp_path / "board.sqlite3")
    await store.close()
    old = os.umask(0o022)
    try:
        snapshot_sqlite(tmp_path / "board.sqlite3", tmp_path / "backup.sqlite3", lambda: None)
        restore_sqlite(tmp_path / "backup.sqlite3", tmp_path / "restored.sqlite3")
    finally:
        os.umask(old)
    for name in ("backup.sqlite3", "restored.sqlite3"):
        mode = stat.S_IMODE((tmp_path / name).stat().st_mode)
        assert mode == 0o600, (name, oct(mode))
