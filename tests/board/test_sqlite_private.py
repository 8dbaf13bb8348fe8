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
