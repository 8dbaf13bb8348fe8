"""The SQLite store: one writer connection, one reader, explicit transactions.

Writers are serialised by an asyncio lock because tasks sharing one aiosqlite
connection would otherwise be folded into each other's commits; `BEGIN IMMEDIATE`
additionally keeps other processes (the CLI next to a running bot) out while a
transaction runs. Reads use their own connection and so see only committed data.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from chatbot.store.migrations import LATEST, MIGRATIONS

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 10_000


class StoreError(Exception):
    """The database cannot be used as it is (too new, damaged, not writable)."""


class Db:
    """One connection's worth of queries; handed to the query modules."""

    def __init__(self, conn: aiosqlite.Connection):
        self._conn = conn

    async def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Run one statement; returns the number of rows it changed."""
        cursor = await self._conn.execute(sql, params)
        try:
            return cursor.rowcount
        finally:
            await cursor.close()

    async def insert(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Run one INSERT into a rowid table; returns the new row's id."""
        cursor = await self._conn.execute(sql, params)
        try:
            return cursor.lastrowid or 0
        finally:
            await cursor.close()

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        await self._conn.executemany(sql, rows)

    async def fetchall(
        self, sql: str, params: Sequence[Any] | dict[str, Any] = ()
    ) -> list[sqlite3.Row]:
        return list(await self._conn.execute_fetchall(sql, params))

    async def fetchone(
        self, sql: str, params: Sequence[Any] | dict[str, Any] = ()
    ) -> sqlite3.Row | None:
        rows = await self._conn.execute_fetchall(sql, params)
        return rows[0] if rows else None


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


class Store:
    def __init__(self, path: Path, writer: aiosqlite.Connection, reader: aiosqlite.Connection):
        self.path = path
        self._writer = writer
        self._reader = reader
        self._write_lock = asyncio.Lock()
        self.reader = Db(reader)
        # Called after every commit: the outbox sender and the worker wake on new rows
        # instead of polling, whichever module wrote them.
        self.on_commit: list[Callable[[], None]] = []

    @classmethod
    async def open(cls, path: str | Path) -> Store:
        path = Path(path)
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
        await self._reader.close()
        await self._writer.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Db]:
        """All statements inside commit together or not at all."""
        async with self._write_lock:
            await self._writer.execute("BEGIN IMMEDIATE")
            try:
                yield Db(self._writer)
            except BaseException:
                await self._writer.execute("ROLLBACK")
                raise
            else:
                await self._writer.execute("COMMIT")
                for wake in self.on_commit:
                    wake()

    async def write_one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """One statement on its own: atomic by itself, so no BEGIN/COMMIT round trips.

        Hot paths (marking an event processed, queueing a reply) pay one hop to the
        database thread instead of three. Returns the changed row count.
        """
        async with self._write_lock:
            cursor = await self._writer.execute(sql, params)
            changed = cursor.rowcount
            await cursor.close()
        for wake in self.on_commit:
            wake()
        return changed

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _migrate(conn: aiosqlite.Connection, path: Path) -> None:
    rows = await conn.execute_fetchall("PRAGMA user_version")
    current = int(rows[0][0])
    if current > LATEST:
        raise StoreError(
            f"{path}: database schema version {current} is newer than this bot knows "
            f"({LATEST}); upgrade the bot instead of opening it with an old one"
        )
    for step in MIGRATIONS.steps:
        version, sql = step.version, step.sql
        if version <= current:
            continue
        log.info("database %s: schema step %d: %s", path, version, step.description)
        await conn.execute("BEGIN IMMEDIATE")
        try:
            # executescript would commit on its own; run the statements one by one
            # so that the step and its version number land in one transaction.
            for statement in _statements(sql):
                await conn.execute(statement)
            await conn.execute(f"PRAGMA user_version = {version}")
        except BaseException:
            await conn.execute("ROLLBACK")
            raise
        await conn.execute("COMMIT")


def _statements(script: str) -> list[str]:
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


class InstanceLock:
    """One running bot per database, so that at start every running job is an orphan.

    An advisory lock on a file beside the database; the kernel drops it when the
    process dies, even by SIGKILL, so a crash never leaves a stale lock behind.
    """

    def __init__(self, database: Path):
        self.path = Path(str(database) + ".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreError(
                f"{self.path}: another bot is already running on this database"
            ) from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
