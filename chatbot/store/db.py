"""The store's interface: one engine-neutral `Store` and `Db`, two engines behind them.

SQLite (`chatbot/store/sqlite.py`) is the embedded default: a file beside the bot.
PostgreSQL (`chatbot/store/postgres.py`) is the shared engine for a bot and workers
on several hosts. The query modules see only `Db` (execute, insert, fetch, lock)
and `Store` (a reader, `transaction()`, `write_one()`, `on_commit`); their SQL is
written once and made an engine's own in `chatbot/store/dialect.py`.

Both engines give the same guarantees: a transaction commits as a whole; write
transactions are serialised (SQLite: one writer; PostgreSQL: a transaction-scoped
advisory lock), so a check and the write that depends on it cannot be split by
another writer, on this host or another; `on_commit` hooks run after every commit
of this process, and (PostgreSQL) after every commit of any other process on the
same database, through LISTEN/NOTIFY.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from chatbot.store.health import StoreHealth

Params = Sequence[Any] | dict[str, Any]

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class StoreError(Exception):
    """The database cannot be used as it is (too new, damaged, not writable, unreachable)."""


class StoreUnwritable(StoreError):
    """A write failed for a reason outside the bot: the disk is full, the file system
    is read-only, an I/O error. The transaction was rolled back whole; the same write
    works again once the reason is gone (see `health.py`)."""


class IntegrityError(StoreError):
    """A constraint refused a write; `where` names it in both engines' words."""

    def __init__(self, message: str, where: str):
        super().__init__(message)
        self.where = where

    def about(self, *names: str) -> bool:
        """True when the refused constraint is one of `names` (SQLite's `table.column`
        or PostgreSQL's constraint name: give both)."""
        return any(name in self.where for name in names)


class Row(tuple[Any, ...]):
    """A result row: by position, by column name, and `dict(row)`, like sqlite3.Row."""

    _index: dict[str, int] = {}

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


_ROW_CLASSES: dict[tuple[str, ...], type[Row]] = {}


def row_class(names: tuple[str, ...]) -> type[Row]:
    """One Row class per column list, so a row costs one tuple."""
    found = _ROW_CLASSES.get(names)
    if found is None:
        found = type("Row", (Row,), {"_index": {n: i for i, n in enumerate(names)}})
        if len(_ROW_CLASSES) < 4096:
            _ROW_CLASSES[names] = found
    return found


class Db:
    """One connection's worth of queries; handed to the query modules."""

    engine: str = ""

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; returns the number of rows it changed."""
        raise NotImplementedError

    async def insert(self, sql: str, params: Params = ()) -> int:
        """Run one INSERT into a table with an `id` column; returns the new row's id."""
        raise NotImplementedError

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        raise NotImplementedError

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        raise NotImplementedError

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def fetch_many(self, reads: Sequence[tuple[str, Params]]) -> list[list[Row]]:
        """Each statement's rows, in order, as fetchall's; an engine that pays a round
        trip per statement (PostgreSQL's reader) sends them all at once."""
        return [await self.fetchall(sql, params) for sql, params in reads]

    async def lock(self, key: str) -> None:
        """Hold `key` until this transaction ends, against every other process on the
        database (a lane's claims count its running jobs under it)."""
        raise NotImplementedError


class ReadOnlyDb(Db):
    """A reader: committed reads only; a write through it is a bug, said at once."""

    async def execute(self, sql: str, params: Params = ()) -> int:
        raise StoreError("the reader does not write; use a transaction")

    async def insert(self, sql: str, params: Params = ()) -> int:
        raise StoreError("the reader does not write; use a transaction")

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        raise StoreError("the reader does not write; use a transaction")

    async def lock(self, key: str) -> None:
        raise StoreError("locks live in transactions")


class Store:
    """An open database: `reader` for committed reads, `transaction()` for writes."""

    engine: str = ""
    # What to call the database in messages (a path, or a URL without its password).
    name: str = ""
    reader: Db

    def __init__(self) -> None:
        # Called after every commit: the outbox sender and the worker wake on new rows
        # instead of polling, whichever module (or, on PostgreSQL, process) wrote them.
        self.on_commit: list[Callable[[], None]] = []
        # Called after a `write_one(..., wake=True)` of this process (a reply queued):
        # only the outbox sender cares, and the worker need not look for jobs then.
        self.on_write: list[Callable[[], None]] = []
        # Whether writes work now; each engine marks it on every write it makes.
        self.health = StoreHealth(self.name, self.probe_write)

    @staticmethod
    async def open(database: str | Path, *, password_file: Path | None = None) -> Store:
        """Open (and migrate) a SQLite file or a `postgresql://` database."""
        if is_postgres(database):
            return await ENGINES["postgresql"](str(database), password_file=password_file)
        return await ENGINES["sqlite"](Path(database))

    def transaction(self, *, exclusive: bool = True) -> AbstractAsyncContextManager[Db]:
        """All statements inside commit together or not at all.

        `exclusive=False` is for a claim, a heartbeat or a worker's registration,
        which touch only their own rows (row locks and the lane's `Db.lock` keep them
        right): on PostgreSQL they do not wait for board moves (SQLite serialises
        every writer anyway), and they wake nobody. A claim that found the lane
        full would otherwise wake every other worker into trying the same, and
        each of those failed claims would wake all the others again.
        """
        raise NotImplementedError

    async def write_one(self, sql: str, params: Params = (), *, wake: bool = False) -> int:
        """One statement on its own: atomic by itself, so no BEGIN/COMMIT round trips.

        Hot paths (marking an event processed, queueing a reply) pay one hop to the
        database instead of three. Returns the changed row count. Such rows queue no
        job and show on no board: with `wake` (a reply queued) it wakes the
        `on_write` hooks of this process (the outbox sender), else nobody; every
        reader that does not wake makes the /status round trip shorter.
        """
        raise NotImplementedError

    async def schema_version(self) -> int:
        raise NotImplementedError

    async def probe_write(self) -> None:
        """One small write, to learn whether writes work again (the health's probe)."""
        now = time.time()
        await self.write_one(_PROBE, (str(now), now))

    def follow_other_processes(self) -> None:
        """Run the `on_commit` hooks for commits of other processes too (a long-running
        process: the bot beside `chatbot worker` processes, or the CLI)."""

    async def lock_instance(self) -> None:
        """One bot (chat and outbox) per database; StoreError when another holds it."""
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    def _committed(self) -> None:
        for wake in self.on_commit:
            wake()

    def _written(self) -> None:
        for wake in self.on_write:
            wake()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


_PROBE = (
    "INSERT INTO kv (key, value, updated_at) VALUES ('store:probe', ?, ?) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"
)


# Each engine's module registers its opener here (the package imports SQLite's and
# registers PostgreSQL's to import at its first use), so this interface does not import
# its implementations.
ENGINES: dict[str, Callable[..., Awaitable[Store]]] = {}


def is_postgres(database: object) -> bool:
    return isinstance(database, str) and database.startswith(POSTGRES_SCHEMES)


class InstanceLock:
    """One running bot per SQLite file, so that at start every running job is an orphan.

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


__all__ = [
    "Db",
    "ReadOnlyDb",
    "InstanceLock",
    "IntegrityError",
    "Row",
    "Store",
    "StoreError",
    "StoreUnwritable",
    "is_postgres",
]
