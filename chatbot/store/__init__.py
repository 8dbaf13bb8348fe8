"""Persistence: every card, transition, job, question and notification, in SQLite (the
embedded default) or PostgreSQL (shared by a bot and workers on several hosts)."""

from chatbot.store import postgres, sqlite  # noqa: F401 - they register their engines
from chatbot.store.db import Db, IntegrityError, Store, StoreError, StoreUnwritable, is_postgres

__all__ = ["Db", "IntegrityError", "Store", "StoreError", "StoreUnwritable", "is_postgres"]
