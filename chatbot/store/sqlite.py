"""SQLite: a writer through aiosqlite, readers of their own, explicit transactions.

Writers are serialised by an asyncio lock because tasks sharing one aiosqlite
connection would otherwise be folded into each other's commits; `BEGIN IMMEDIATE`
additionally keeps other processes (the CLI, or `chatbot worker` processes beside
a running bot) out while a transaction runs. Reads use their own connections and
so see only committed data.

Checkpoints (copying the write-ahead log into the database file, with an fsync)
run on a connection and thread of their own (`sqlite_threads.py`), once a second,
never inside a write: SQLite's automatic checkpoint would run in whichever commit
crossed the threshold, holding the write lock for the fsync's milliseconds while
the next chat command's bookkeeping waited behind it (about one command in a
hundred).

A read whose last run was quick (a card by its slug: tens of microseconds) runs on
the event loop's own thread: a hop to a database thread and back costs more than
the query, and `/status` makes several. A read whose last run took longer (a
board of 100,000 cards for the web page) runs on the reader thread, so the loop
does not stall on it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
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
    StoreUnwritable,
)
from chatbot.store.dialect import for_sqlite
from chatbot.store.migrations import LATEST, MIGRATIONS, summary
from chatbot.store.sqlite_threads import BUSY_TIMEOUT_MS, Checkpointer, SqliteReader

log = logging.getLogger(__name__)


def create_private(path: Path) -> None:
    """A new board file is the bot user's alone (0600): SQLite makes its WAL and
    shared-memory files with the database's mode, so they are too."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return
    os.close(fd)


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
            # aiosqlite's stub wants Iterable params; a dict of named ones works in sqlite3.
            return list(await self._conn.execute_fetchall(for_sqlite(sql), params))  # type: ignore[arg-type]
        except sqlite3.IntegrityError as error:
            raise IntegrityError(str(error), str(error)) from None

    async def lock(self, key: str) -> None:
        """Nothing to do: `BEGIN IMMEDIATE` already holds the whole database."""


# How often a long-running process looks for other processes' commits.
FOLLOW_S = 1.0
# SQLite's primary result codes for a write the system refused, and what they mean.
_SQLITE_FULL, _SQLITE_IOERR, _SQLITE_READONLY, _SQLITE_CANTOPEN = 13, 10, 8, 14
_REFUSALS = {
    _SQLITE_FULL: "the disk holding it is full",
    _SQLITE_IOERR: "input/output error",
    _SQLITE_READONLY: "it is read-only",
    _SQLITE_CANTOPEN: "it cannot be opened",
}
# Free space below which neither the probe nor any other write calls the disk writable again.
PROBE_FREE_BYTES = 1 << 20


def unwritable_reason(error: sqlite3.Error, path: Path) -> str | None:
    """Why a write failed, when the cause is the disk or the file (not the bot)."""
    # getattr: sqlite3 sets the error code only on errors that came from SQLite itself
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return None
    meaning = _REFUSALS.get(code & 0xFF)
    if meaning is None:
        return None
    free = _free_bytes(path)
    # A write into the shared-memory index of a full disk fails as an I/O error.
    if code & 0xFF in (_SQLITE_FULL, _SQLITE_IOERR) and free is not None:
        if free < PROBE_FREE_BYTES:
            meaning = _REFUSALS[_SQLITE_FULL]
        meaning += f" ({free} bytes free)"
    return f"{meaning} ({error})"


def _has_room(path: Path) -> bool:
    free = _free_bytes(path)
    return free is None or free >= PROBE_FREE_BYTES


def _free_bytes(path: Path) -> int | None:
    try:
        return shutil.disk_usage(path.parent).free
    except OSError:
        return None


def _quick_writer(path: Path) -> sqlite3.Connection:
    """For `write_one` on the loop's thread: it never waits for a lock (busy_timeout 0)
    and never checkpoints (the Checkpointer does, so no write pays an fsync)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 0")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("PRAGMA cache_size = -512")  # KiB: it only inserts and updates by key
    return conn


async def _configure(conn: aiosqlite.Connection) -> None:
    conn.row_factory = sqlite3.Row
    await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    await conn.execute("PRAGMA foreign_keys = ON")
    # NORMAL in WAL mode survives a process crash (the tests kill with SIGKILL);
    # only a power cut can lose the last commits, which is the usual trade.
    await conn.execute("PRAGMA synchronous = NORMAL")
    await conn.execute("PRAGMA wal_autocheckpoint = 0")  # the Checkpointer's job


class SqliteStore(Store):
    engine = "sqlite"

    def __init__(self, path: Path, writer: aiosqlite.Connection, reader: SqliteReader):
        super().__init__()
        self.path = path
        self.name = str(path)
        self.health.name = self.name
        self._writer = writer
        self._reader = reader
        self._write_lock = asyncio.Lock()
        self.reader = reader
        self._instance: InstanceLock | None = None
        self._quick_writer = _quick_writer(path)
        self._follower: asyncio.Task[None] | None = None
        self.checkpointer = Checkpointer(path)
        self.checkpointer.start()

    # Each engine opens from what it needs (a path here, an address there).
    @classmethod
    async def open(cls, path: Path) -> SqliteStore:  # type: ignore[override]
        path.parent.mkdir(parents=True, exist_ok=True)
        create_private(path)
        writer = await aiosqlite.connect(path, isolation_level=None)
        reader: SqliteReader | None = None
        try:
            await _configure(writer)
            mode = list(await writer.execute_fetchall("PRAGMA journal_mode = WAL"))
            if not mode or str(mode[0][0]).lower() != "wal":
                raise StoreError(f"{path}: cannot switch the database to WAL mode")
            await _migrate(writer, path)
            reader = await asyncio.to_thread(SqliteReader, path)
            return cls(path, writer, reader)
        except BaseException as error:
            # An unclosed aiosqlite connection keeps its thread, and the process, alive.
            if reader is not None:
                await reader.close()
            await writer.close()
            if isinstance(error, sqlite3.DatabaseError):
                problem = unwritable_reason(error, path)
                if problem is not None:
                    raise StoreUnwritable(f"{path}: {problem}") from None
                raise StoreError(f"{path}: {error}") from None
            raise

    async def close(self) -> None:
        if self._follower is not None:
            self._follower.cancel()
        if self._instance is not None:
            self._instance.release()
            self._instance = None
        await self.health.close()
        await self.checkpointer.close()
        await self._reader.close()
        self._quick_writer.close()
        await self._writer.close()

    @asynccontextmanager
    async def transaction(self, *, exclusive: bool = True) -> AsyncIterator[Db]:
        async with self._write_lock:
            try:
                await self._writer.execute("BEGIN IMMEDIATE")
                yield SqliteDb(self._writer)
                await self._writer.execute("COMMIT")
            except BaseException as error:
                # Whatever failed (a BEGIN half-way, the body, a COMMIT the log could not
                # take) or was cancelled (the statement runs on the writer's thread all
                # the same) must not leave the connection inside a transaction for the
                # next writer; after a COMMIT that went through, the ROLLBACK does nothing.
                await self._rollback()
                if isinstance(error, sqlite3.OperationalError):
                    raise self._refused(error) from None
                raise
            self._wrote()
            if exclusive:
                self._committed()

    async def _rollback(self) -> None:
        try:
            # Shielded: queued on the writer's thread after whatever is there, it ends
            # the transaction even when this task is being cancelled.
            await asyncio.shield(self._writer.execute("ROLLBACK"))
        except sqlite3.OperationalError as error:
            # None open: SQLite rolled back on its own (SQLITE_FULL may), or never began.
            log.debug("rollback: %s", error)

    def _refused(self, error: sqlite3.OperationalError) -> Exception:
        """A failed write as the store's error: StoreUnwritable when the cause is outside
        the bot (then the health knows), else the error itself (a bug, a lock)."""
        problem = unwritable_reason(error, self.path)
        if problem is None:
            return error
        self.health.failed(problem)
        return StoreUnwritable(f"{self.path}: {problem}")

    async def write_one(self, sql: str, params: Params = (), *, wake: bool = False) -> int:
        sql = for_sqlite(sql)
        async with self._write_lock:
            # With the lock held no transaction of ours is open; when no other process
            # writes either, the statement runs at once on the loop's thread (tens of
            # microseconds; no hop). Busy: the writer's thread waits for the database.
            try:
                try:
                    changed = self._quick_writer.execute(sql, params).rowcount
                except sqlite3.OperationalError as error:
                    if "locked" not in str(error) and "busy" not in str(error):
                        raise
                    cursor = await self._writer.execute(sql, params)
                    changed = cursor.rowcount
                    await cursor.close()
            except sqlite3.IntegrityError as error:
                raise IntegrityError(str(error), str(error)) from None
            except sqlite3.OperationalError as error:
                raise self._refused(error) from None
        self._wrote()
        if wake:
            self._written()
        return changed

    def _wrote(self) -> None:
        """A write went through. While writes are refused, that alone does not end the
        episode: a small write fits into the log's free pages of a disk that is still
        full, and the next real one fails (the rooms heard "saves again" in between)."""
        if not self.health.writable and not _has_room(self.path):
            return
        self.health.worked()

    async def probe_write(self) -> None:
        # A small write can fit into the log's free pages while a real one still would
        # not: call the disk writable again only with some room on it.
        free = await asyncio.to_thread(_free_bytes, self.path)
        if free is not None and free < PROBE_FREE_BYTES:
            self.health.failed(f"the disk holding it is full ({free} bytes free)")
            return
        await super().probe_write()

    def follow_other_processes(self) -> None:
        if self._follower is None:
            self._follower = asyncio.create_task(self._follow(), name="sqlite-follow")

    async def _follow(self) -> None:
        """SQLite tells no one of a commit: look at the file's change counter now and
        then (every commit, ours included, moves it; ours woke the hooks already, so
        the hooks run at most once a second more)."""
        seen = self._reader.data_version()
        while True:
            await asyncio.sleep(FOLLOW_S)
            version = self._reader.data_version()
            if version != seen:
                seen = version
                self._committed()

    async def schema_version(self) -> int:
        row = await self._reader.fetchone("PRAGMA user_version")
        return int(row[0]) if row else 0

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
    reached = current
    try:
        for step in MIGRATIONS.steps:
            if step.version <= current:
                continue
            log.debug("database %s: schema step %d: %s", path, step.version, step.description)
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
            reached = step.version
    finally:
        # Said also when a later step failed: the steps before it are in the file.
        if line := summary(str(path), current, reached):
            log.info("%s", line)


ENGINES["sqlite"] = SqliteStore.open
