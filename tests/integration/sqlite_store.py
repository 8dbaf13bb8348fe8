"""A tiny sqlite3-file StateStore for the restart tests.

Stands in for the bot's real store (chatbot/store) until that one is wired
in; the point is only that state survives a new transport object.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


class SqliteStateStore:
    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        # As the bot's store runs it: WAL, fsync at checkpoints only.
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(
            "CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE IF NOT EXISTS processed (transport TEXT, event_id TEXT,"
            " PRIMARY KEY (transport, event_id));"
        )

    async def get_value(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    async def set_value(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO kv VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    async def mark_processed(self, transport: str, event_id: str) -> bool:
        cur = self.db.execute(
            "INSERT OR IGNORE INTO processed VALUES (?, ?)", (transport, event_id)
        )
        return cur.rowcount == 1

    def close(self) -> None:
        self.db.close()
