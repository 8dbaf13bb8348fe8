"""SQLite through aiosqlite: one writer connection, one reader, explicit transactions.

Writers are serialised by an asyncio lock because tasks sharing one aiosqlite
connection would otherwise be folded into each other's commits; `BEGIN IMMEDIATE`
additionally keeps other processes (the CLI, or `chatbot worker` processes beside
a running bot) out while a transaction runs. Reads use their own connection and so
see only committed data.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from chatbot.store.db import (
    ENGINES,
    Db,
    InstanceLock,
    IntegrityError,
    Params,
    Row,
    Store,
    StoreError,
)
from chatbot.store.dialect import for_sqlite
from chatbot.store.migrations import LATEST, MIGRATIONS

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 10_000


class SqliteDb(Db):
    engine = "sqlite"

    def __init__(self, conn: aiosqlite.Connection):
        self._conn = conn

    async def execute(self, sql: str, params: Params = ()) -> int:
        try:
            cursor = await self._conn.execute(for_sqlite(sql), params)
        except sqlite3.IntegrityError as error:
            raise IntegrityError(str(error), str(error)) from None
        try:
            return cursor.rowcount
        finally:
            await cursor.close()

    async def insert(self, sql: str, params: Params = ()) -> int:
        try:
            cursor = await self._conn.execute(for_sqlite(sql), params)
        except sqlite3.IntegrityError as error:
            raise IntegrityError(str(error), str(error)) from None
        try:
            return cursor.lastrowid or 0
        finally:
            await cursor.close()

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        await self._conn.executemany(for_sqlite(sql), rows)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        try:
            return list(await self._conn.execute_fetchall(for_sqlite(sql), params))  # type: ignore[arg-type]
        except sqlite3.IntegrityError as error:
            raise IntegrityError(str(error), str(error)) from None

    async def lock(self, key: str) -> None:
        """Nothing to do: `BEGIN IMMEDIATE` already holds the whole database."""


async def _connect(path: Path, *, readonly: bool) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    await conn.execute("PRAGMA foreign_keys = ON")
    # NORMAL in WAL mode survives a process crash (the tests kill with SIGKILL);
    # only a power cut can lose the last commits, which is the usual trade.
    await conn.execute("PRAGMA synchronous = NORMAL")
    if readonly:
        await conn.execute("PRAGMA query_only = ON")
    return conn


class SqliteStore(Store):
    engine = "sqlite"

    def __init__(self, path: Path, writer: aiosqlite.Connection, reader: aiosqlite.Connection):
        super().__init__()
        self.path = path
        self.name = str(path)
        self._writer = writer
        self._reader = reader
        self._write_lock = asyncio.Lock()
        self.reader = SqliteDb(reader)
        self._instance: InstanceLock | None = None

    @classmethod
    async def open(cls, path: Path) -> SqliteStore:  # type: ignore[override]
        path.parent.mkdir(parents=True, exist_ok=True)
        writer = await _connect(path, readonly=False)
        try:
            mode = await writer.execute_fetchall("PRAGMA journal_mode = WAL")
            if not mode or str(mode[0][0]).lower() != "wal":
                raise StoreError(f"{path}: cannot switch the database to WAL mode")
            await _migrate(writer, path)
            reader = await _connect(path, readonly=True)
        except BaseException as error:
            # An unclosed aiosqlite connection keeps its thread, and the process, alive.
            await writer.close()
            if isinstance(error, sqlite3.DatabaseError):
                raise StoreError(f"{path}: {error}") from None
            raise
        return cls(path, writer, reader)

    async def close(self) -> None:
        if self._instance is not None:
            self._instance.release()
            self._instance = None
        await self._reader.close()
        await self._writer.close()

    @asynccontextmanager
    async def transaction(self, *, exclusive: bool = True) -> AsyncIterator[Db]:
        async with self._write_lock:
            await self._writer.execute("BEGIN IMMEDIATE")
            try:
                yield SqliteDb(self._writer)
            except BaseException:
                await self._writer.execute("ROLLBACK")
                raise
            else:
                await self._writer.execute("COMMIT")
                self._committed()

    async def write_one(self, sql: str, params: Params = ()) -> int:
        async with self._write_lock:
            cursor = await self._writer.execute(for_sqlite(sql), params)
            changed = cursor.rowcount
            await cursor.close()
        self._committed()
        return changed

    async def schema_version(self) -> int:
        rows = await self._reader.execute_fetchall("PRAGMA user_version")
        return int(next(iter(rows))[0])

    async def lock_instance(self) -> None:
        lock = InstanceLock(self.path)
        lock.acquire()
        self._instance = lock


async def _migrate(conn: aiosqlite.Connection, path: Path) -> None:
    rows = await conn.execute_fetchall("PRAGMA user_version")
    current = int(next(iter(rows))[0])
    if current > LATEST:
        raise StoreError(
            f"{path}: database schema version {current} is newer than this bot knows "
            f"({LATEST}); upgrade the bot instead of opening it with an old one"
        )
    for step in MIGRATIONS.steps:
        if step.version <= current:
            continue
        log.info("database %s: schema step %d: %s", path, step.version, step.description)
        await conn.execute("BEGIN IMMEDIATE")
        try:
            # executescript would commit on its own; run the statements one by one
            # so that the step and its version number land in one transaction.
            for statement in MIGRATIONS.statements(step):
                await conn.execute(statement)
            await conn.execute(f"PRAGMA user_version = {step.version}")
        except BaseException:
            await conn.execute("ROLLBACK")
            raise
        await conn.execute("COMMIT")


ENGINES["sqlite"] = SqliteStore.open
