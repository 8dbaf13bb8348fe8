"""No secret reaches the log at any level (issue 33 point 8): with -v, aiosqlite's DEBUG
lines carried SQL parameters, a web session's CSRF token among them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from chatbot.app import logformat
from chatbot.store.db import Store


async def test_verbose_logging_shows_no_sql_parameter(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = logging.getLogger()
    before = root.level, {name: logging.getLogger(name).level for name in ("aiosqlite", "psycopg")}
    logformat.setup(verbose=True)
    try:
        root.setLevel(logging.DEBUG)
        caplog.set_level(logging.DEBUG)
        store = await Store.open(tmp_path / "board.sqlite3")
        try:
            async with store.transaction() as db:
                await db.execute(
                    "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, 0)",
                    ("test:csrf", "csrf-SECRET-4711"),
                )
        finally:
            await store.close()
        assert "csrf-SECRET-4711" not in caplog.text
    finally:
        root.setLevel(before[0])
        for name, level in before[1].items():
            logging.getLogger(name).setLevel(level)
