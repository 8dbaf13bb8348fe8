"""SQLite's connections on threads of their own: committed reads and checkpoints.

The store's writer is aiosqlite's; these two kinds of connection work beside it and
never write board data. A read whose last run was quick (a card by its slug: tens of
microseconds) runs on the event loop's own thread: a hop to a database thread and
back costs more than the query. Checkpoints copy the write-ahead log into the
database file once a second, never inside a write (see sqlite.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from chatbot.store.db import Params, ReadOnlyDb, Row
from chatbot.store.dialect import for_sqlite

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 10_000
# How often the write-ahead log is copied into the database file, off the write path.
CHECKPOINT_S = 1.0
# Reads whose last run took less than this run on the loop's thread (see above).
INLINE_BELOW_S = 0.0005
_KNOWN_QUERIES = 2048


class SqliteReader(ReadOnlyDb):
    """Committed reads: inline when known to be quick, else on the reader thread.

    Two connections, one per thread, so an inline read never waits for a slow one.
    """

    engine = "sqlite"

    def __init__(self, path: Path):
        self._inline = _plain_reader(path)
        self._threaded = _plain_reader(path)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sqlite-reader")
        # How long each statement's last run took: a statement runs inline while its
        # last run was quick, so one that grows slow goes back to the thread after one run.
        self._last: dict[str, float] = {}

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        sql = for_sqlite(sql)
        last = self._last.get(sql)
        if last is not None and last < INLINE_BELOW_S:
            rows, took = _timed(self._inline, sql, params)
        else:
            loop = asyncio.get_running_loop()
            rows, took = await loop.run_in_executor(
                self._thread, _timed, self._threaded, sql, params
            )
        if last is not None or len(self._last) < _KNOWN_QUERIES:
            self._last[sql] = took
        return rows

    async def fetch_many(self, reads: Sequence[tuple[str, Params]]) -> list[list[Row]]:
        """Side by side: the quick ones inline while a slow one runs on the reader thread."""
        return list(await asyncio.gather(*(self.fetchall(sql, params) for sql, params in reads)))

    def data_version(self) -> int:
        return int(self._inline.execute("PRAGMA data_version").fetchone()[0])

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._thread, self._threaded.close)
        self._thread.shutdown(wait=True)
        self._inline.close()


def _timed(conn: sqlite3.Connection, sql: str, params: Params) -> tuple[list[Row], float]:
    start = time.perf_counter()
    rows = conn.execute(sql, params).fetchall()
    return rows, time.perf_counter() - start


def _plain_reader(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA query_only = ON")
    return conn


class Checkpointer:
    """Copies the write-ahead log into the database now and then, beside the writers.

    A PASSIVE checkpoint takes no write lock: writers and readers go on while it
    copies and fsyncs, and whatever it cannot copy yet (a reader still needs it)
    the next round does. Another process's checkpoint running at the same time
    only makes this round a no-op.
    """

    def __init__(self, path: Path):
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA busy_timeout = 0")
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sqlite-checkpoint")
        self._task: asyncio.Task[None] | None = None
        #: Rounds run so far, and the log frames the last one found in the database file.
        self.rounds = 0
        self.frames = 0
        self.round_done = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.create_task(self._every(CHECKPOINT_S), name="sqlite-checkpoint")

    async def _every(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self.run()
            except Exception:  # noqa: BLE001 - a bad round must not end the checkpoints
                log.exception("checkpoint of the write-ahead log failed; trying again")

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            copied = await loop.run_in_executor(self._thread, self._checkpoint)
        except sqlite3.OperationalError as error:
            log.debug("checkpoint skipped: %s", error)
            return
        self.rounds += 1
        self.frames = copied
        self.round_done.set()

    def _checkpoint(self) -> int:
        _busy, _logged, copied = self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return max(0, int(copied))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await asyncio.get_running_loop().run_in_executor(self._thread, self._conn.close)
        self._thread.shutdown(wait=True)
