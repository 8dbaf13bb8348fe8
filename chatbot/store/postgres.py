"""PostgreSQL through psycopg 3: a pool of autocommit connections and a listener.

Reads take a pooled connection for one statement, so they see committed data and
hold nothing. A write transaction opens with one round trip that takes the
database-wide advisory lock (write transactions run one at a time, as on SQLite,
whichever host they come from) and queues a NOTIFY: PostgreSQL delivers it only if
the transaction commits, to every process listening on the database, whose
`on_commit` hooks then run as if the commit had been local. Claims and heartbeats
skip the database-wide lock and the NOTIFY (`exclusive=False`): they touch their
own rows only, and nobody needs waking for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import psycopg
import psycopg_pool
from psycopg.adapt import Dumper
from psycopg.postgres import types as pg_types
from psycopg.types.numeric import FloatLoader
from psycopg.types.string import TextLoader

from chatbot.store.db import (
    Db,
    IntegrityError,
    Params,
    ReadOnlyDb,
    Row,
    Store,
    StoreError,
    StoreUnwritable,
    row_class,
)
from chatbot.store.dialect import PRELUDE, ddl_for_postgres, for_postgres
from chatbot.store.health import StoreHealth
from chatbot.store.migrations import LATEST, MIGRATIONS, summary

log = logging.getLogger(__name__)

CHANNEL = "chatbot_commits"
# Advisory lock keys (class, object): writers, the one bot, migrations, lanes.
_LOCK_CLASS = 0x6362  # "cb"
_WRITERS, _INSTANCE, _MIGRATE = 1, 2, 3
_KEYED_CLASS = 0x6363
# The one bot's lock, for whoever must not work beside a running bot (a restore).
INSTANCE_LOCK = (_LOCK_CLASS, _INSTANCE)
# Connections per process: the pool, plus one listening and (the bot) one for its lock.
POOL_MAX = 6
CONNECT_TIMEOUT_S = 10


def redacted(url: str) -> str:
    """The URL without a password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit((parts.scheme, user + host, parts.path, parts.query, parts.fragment))


def _row_factory(cursor: psycopg.AsyncCursor[Any]) -> Any:
    description = cursor.description
    if description is None:
        return tuple
    make = row_class(tuple(column.name for column in description))
    return lambda values: make(values)


class _FlagDumper(Dumper):
    """The schema is SQLite's, where a flag is an INTEGER 0 or 1: a Python bool goes
    as that, not as PostgreSQL's boolean (which an integer column refuses)."""

    oid = pg_types["int8"].oid

    def dump(self, obj: bool) -> bytes:
        return b"1" if obj else b"0"


async def _configure(conn: psycopg.AsyncConnection[Any]) -> None:
    # JSON aggregates come back as text (the query modules parse JSON themselves, as
    # with SQLite) and sums as floats, not Decimals.
    for name in ("json", "jsonb"):
        conn.adapters.register_loader(name, TextLoader)
    conn.adapters.register_loader("numeric", FloatLoader)
    conn.adapters.register_dumper(bool, _FlagDumper)
    conn.row_factory = _row_factory


def _params(params: Params) -> Params | None:
    # psycopg reads `%` as a placeholder only when parameters are given; the dialect
    # doubles every literal `%`, so always give them.
    return params if isinstance(params, dict) else tuple(params)


def _first_line(error: BaseException) -> str:
    # libpq adds hint lines ("Is the server running on that host ...?") to its reasons.
    text = str(error).strip()
    return text.splitlines()[0] if text else repr(error)


class _OneLine(logging.Filter):
    """psycopg's pool logs every failed reconnect with libpq's multi-line reason (and
    may add a traceback): in an outage, one line per failure, the rest only with -v."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.DEBUG and not log.isEnabledFor(logging.DEBUG):
            lines = record.getMessage().strip().splitlines()
            record.msg, record.args = (lines[0] if lines else ""), None
            record.exc_info = record.exc_text = None
        return True


logging.getLogger("psycopg.pool").addFilter(_OneLine())


@contextlib.contextmanager
def _reachable(name: str, health: StoreHealth | None = None) -> Iterator[None]:
    """A lost or refused connection as the store's own error, in words: the worker
    goes on and tries again; nothing else needs to know psycopg.

    With `health` (a write), the database being away or out of space (disk full is
    SQLSTATE 53100) is StoreUnwritable and starts the health's episode; a rolled-back
    transaction (class 40: a deadlock) is not the database's state, only this write's.
    """
    try:
        yield
    except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as error:
        reason = _first_line(error)
        # getattr: a pool timeout is no database error and carries no SQLSTATE
        sqlstate = getattr(error, "sqlstate", None) or ""
        if health is not None and not sqlstate.startswith("40"):
            health.failed(reason)
            raise StoreUnwritable(f"database {name}: {reason}") from error
        raise StoreError(f"database {name}: {reason}") from error


def _integrity(error: psycopg.errors.IntegrityError) -> IntegrityError:
    diag = error.diag
    where = f"{diag.table_name or ''}.{diag.column_name or ''} {diag.constraint_name or ''}"
    return IntegrityError(str(error).strip(), where)


def _read_password(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise StoreError(f"database password file {path}: {error.strerror or error}") from None


class PostgresDb(Db):
    """Statements on one connection (inside a transaction)."""

    engine = "postgresql"

    def __init__(self, conn: psycopg.AsyncConnection[Any]):
        self._conn = conn

    async def _run(self, sql: str, params: Params) -> psycopg.AsyncCursor[Any]:
        try:
            return await self._conn.execute(for_postgres(sql), _params(params))
        except psycopg.errors.IntegrityError as error:
            raise _integrity(error) from None

    async def execute(self, sql: str, params: Params = ()) -> int:
        cursor = await self._run(sql, params)
        return cursor.rowcount

    async def insert(self, sql: str, params: Params = ()) -> int:
        cursor = await self._run(sql + " RETURNING id", params)
        row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        async with self._conn.cursor() as cursor:
            try:
                await cursor.executemany(for_postgres(sql), list(rows))
            except psycopg.errors.IntegrityError as error:
                raise _integrity(error) from None

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        cursor = await self._run(sql, params)
        return await cursor.fetchall()

    async def lock(self, key: str) -> None:
        await self._conn.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_KEYED_CLASS, key)
        )


class PooledReader(ReadOnlyDb):
    """Committed reads: each statement on a pooled connection of its own."""

    engine = "postgresql"

    def __init__(self, pool: psycopg_pool.AsyncConnectionPool, name: str):
        self._pool = pool
        self.name = name

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        with _reachable(self.name):
            async with self._pool.connection() as conn:
                cursor = await conn.execute(for_postgres(sql), _params(params))
                # _row_factory makes every row a Row.
                return cast(list[Row], await cursor.fetchall())

    async def fetch_many(self, reads: Sequence[tuple[str, Params]]) -> list[list[Row]]:
        """One connection, one pipeline: the statements go out together and their rows
        come back together, one round trip instead of one each."""
        with _reachable(self.name):
            async with self._pool.connection() as conn:
                async with conn.pipeline():
                    cursors = [
                        await conn.execute(for_postgres(sql), _params(params))
                        for sql, params in reads
                    ]
                return [cast(list[Row], await cursor.fetchall()) for cursor in cursors]


class PostgresStore(Store):
    engine = "postgresql"

    def __init__(self, url: str, pool: psycopg_pool.AsyncConnectionPool, connect: dict[str, Any]):
        super().__init__()
        self.url = url
        self.name = redacted(url)
        self.health.name = self.name
        self._pool = pool
        self._connect = connect
        self.reader = PooledReader(pool, self.name)
        # Our own NOTIFYs carry this token: the local hooks ran already at commit.
        self._token = secrets.token_hex(8)
        self._begin = (
            f"BEGIN; SELECT pg_advisory_xact_lock({_LOCK_CLASS}, {_WRITERS}), "
            f"pg_notify('{CHANNEL}', '{self._token}')"
        )
        self._listener: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()
        self._instance: psycopg.AsyncConnection[Any] | None = None

    # Each engine opens from what it needs (an address here, a path there).
    @classmethod
    async def open(cls, url: str, *, password_file: Path | None = None) -> PostgresStore:  # type: ignore[override]
        connect: dict[str, Any] = {"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S}
        if password_file is not None:
            connect["password"] = _read_password(password_file)
        pool = psycopg_pool.AsyncConnectionPool(
            url,
            min_size=1,
            max_size=POOL_MAX,
            kwargs=connect,
            configure=_configure,
            open=False,
            # psycopg names the pool in its warnings: the database, without a password.
            name=redacted(url),
        )
        try:
            # Fail fast with the server's own reason (a wrong password, no such database).
            probe = await psycopg.AsyncConnection.connect(url, **connect)
            await probe.close()
            await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except (psycopg.Error, psycopg_pool.PoolTimeout, OSError) as error:
            await pool.close()
            reason = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            raise StoreError(f"cannot use the database {redacted(url)}: {reason}") from None
        store = cls(url, pool, connect)
        try:
            await store._migrate()
        except BaseException:
            await pool.close()
            raise
        store._listener = asyncio.create_task(store._listen(), name="store-listen")
        return store

    async def close(self) -> None:
        await self.health.close()
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
        if self._instance is not None:
            with contextlib.suppress(psycopg.Error):
                await self._instance.close()
        await self._pool.close()

    @asynccontextmanager
    async def transaction(self, *, exclusive: bool = True) -> AsyncIterator[Db]:
        with _reachable(self.name, self.health):
            async with self._pool.connection() as conn:
                await conn.execute(self._begin if exclusive else "BEGIN")
                try:
                    yield PostgresDb(conn)
                except BaseException:
                    with contextlib.suppress(psycopg.Error):
                        await conn.execute("ROLLBACK")
                    raise
                else:
                    await conn.execute("COMMIT")
        self.health.worked()
        if exclusive:
            self._committed()

    async def write_one(self, sql: str, params: Params = (), *, wake: bool = False) -> int:
        with _reachable(self.name, self.health):
            async with self._pool.connection() as conn:
                try:
                    cursor = await conn.execute(for_postgres(sql), _params(params))
                except psycopg.errors.IntegrityError as error:
                    raise _integrity(error) from None
                changed = cursor.rowcount
        self.health.worked()
        if wake:
            self._written()
        return changed

    async def schema_version(self) -> int:
        row = await self.reader.fetchone("SELECT version FROM chatbot_schema")
        return int(row[0]) if row else 0

    async def lock_instance(self) -> None:
        """A session advisory lock on a connection of its own: the server drops it when
        the bot's connection goes, even when the bot was killed."""
        conn = await psycopg.AsyncConnection.connect(self.url, **self._connect)
        cursor = await conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (_LOCK_CLASS, _INSTANCE))
        row = await cursor.fetchone()
        if not row or not row[0]:
            await conn.close()
            raise StoreError(f"{self.name}: another bot is already running on this database")
        self._instance = conn

    async def wait_listening(self) -> None:
        """Until commits of other processes wake this one (tests and benchmarks)."""
        await self._listening.wait()

    async def _listen(self) -> None:
        """Run the hooks for other processes' commits; reconnect with back-off."""
        delay = 0.5
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.url, **self._connect)
                async with conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    self._listening.set()
                    delay = 0.5
                    # Something may have been committed while we were not listening.
                    self._committed()
                    async for notice in conn.notifies():
                        if notice.payload != self._token:
                            self._committed()
            except asyncio.CancelledError:
                raise
            except (psycopg.Error, OSError) as error:
                self._listening.clear()
                log.warning(
                    "database %s: listener lost (%s); again in %.1f s",
                    self.name,
                    _first_line(error),
                    delay,
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)

    async def _migrate(self) -> None:
        async with self._pool.connection() as conn:
            await conn.execute("BEGIN")
            try:
                await conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_LOCK_CLASS, _MIGRATE))
                await conn.execute("CREATE TABLE IF NOT EXISTS chatbot_schema (version integer)")
                cursor = await conn.execute("SELECT version FROM chatbot_schema")
                row = await cursor.fetchone()
                if row is None:
                    await conn.execute("INSERT INTO chatbot_schema (version) VALUES (0)")
                current = int(row[0]) if row else 0
                if current > LATEST:
                    raise StoreError(
                        f"{self.name}: database schema version {current} is newer than this "
                        f"bot knows ({LATEST}); upgrade the bot instead of opening it with an "
                        "old one"
                    )
                if current < LATEST:
                    for statement in PRELUDE:
                        await conn.execute(statement)
                for step in MIGRATIONS.steps:
                    if step.version <= current:
                        continue
                    log.debug("database %s: schema step %d: %s", self.name, step.version,
                              step.description)  # fmt: skip
                    for statement in MIGRATIONS.statements(step):
                        await conn.execute(ddl_for_postgres(statement), ())
                    await conn.execute("UPDATE chatbot_schema SET version = %s", (step.version,))
            except BaseException:
                with contextlib.suppress(psycopg.Error):
                    await conn.execute("ROLLBACK")
                raise
            await conn.execute("COMMIT")
        # One transaction: every step is in, or none (a failure above says nothing here).
        if line := summary(self.name, current, LATEST):
            log.info("%s", line)
