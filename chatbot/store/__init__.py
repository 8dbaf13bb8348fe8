"""Persistence: every card, transition, job, question and notification, in SQLite (the
embedded default) or PostgreSQL (shared by a bot and workers on several hosts)."""

from __future__ import annotations

from pathlib import Path

from chatbot.store import sqlite  # noqa: F401 - registers its engine
from chatbot.store.db import (
    ENGINES,
    Db,
    IntegrityError,
    Store,
    StoreError,
    StoreUnwritable,
    is_postgres,
)


async def _open_postgresql(database: str, *, password_file: Path | None = None) -> Store:
    # Imported at the first PostgreSQL open: psycopg and its pool take 0.1-0.2 s to
    # import, paid by every `chatbot` start on a SQLite board (the default) otherwise.
    from chatbot.store.postgres import PostgresStore

    return await PostgresStore.open(database, password_file=password_file)


ENGINES["postgresql"] = _open_postgresql

__all__ = ["Db", "IntegrityError", "Store", "StoreError", "StoreUnwritable", "is_postgres"]
