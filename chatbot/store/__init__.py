"""SQLite persistence: every card, transition, job, question and notification."""

from chatbot.store.db import Db, Store, StoreError

__all__ = ["Db", "Store", "StoreError"]
