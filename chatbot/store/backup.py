"""The database's part of `chatbot backup` and `chatbot restore`, for both engines.

A backup is one moment of the board: SQLite's online backup API copies the pages
of one read transaction (the bot and workers write on meanwhile: in WAL mode a
reader holds nobody up), PostgreSQL's `pg_dump` reads a snapshot this module
exported. While that moment is held, `during` runs: the app copies the Matrix
crypto store then, so the store is never older than the board's sync token (keys
that came after the moment are in the store too; a board that knew of keys the
store lacks would never read those messages again).

Restoring goes through the same APIs (the backup API into the configured file,
`pg_restore` in one transaction), refuses a database a bot runs on, and marks
every worker the backup knew as stopped: their jobs are orphans from the first
start on, recovered as after a crash, on whichever host.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatbot.store.db import InstanceLock, StoreError
from chatbot.store.postgres import INSTANCE_LOCK, redacted
from chatbot.store.sqlite import create_private

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "redacted",
]

BUSY_TIMEOUT_MS = 10_000
# Rows every new database has: not what "holds data" means.
_SEEDED = {"digests", "chatbot_schema"}
_FORGET_WORKERS = "UPDATE workers SET expires_at = {now} WHERE expires_at > {now}"


@dataclass(frozen=True)
class BackupSnapshot:
    schema_step: int
    # PostgreSQL: the schema the tables live in (restored into the same one).
    schema: str | None = None


# --- SQLite ----------------------------------------------------------------------


def _sqlite(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


def copy_sqlite(source: Path, dest: Path) -> None:
    """One SQLite file (nio's crypto store) as of one moment, with the backup API."""
    src = _sqlite(source)
    try:
        _backup_into(src, dest)
    finally:
        src.close()


def _backup_into(src: sqlite3.Connection, dest: Path) -> None:
    create_private(dest)  # the bot user's alone from its first byte
    out = sqlite3.connect(dest)
    try:
        src.backup(out)
        # One self-contained file: no write-ahead log beside it to forget.
        out.execute("PRAGMA journal_mode = DELETE")
    finally:
        out.close()


def snapshot_sqlite(path: Path, dest: Path, during: Callable[[], None]) -> BackupSnapshot:
    if not path.is_file():
        raise StoreError(f"{path}: no database there (bot.database)")
    src = _sqlite(path)
    try:
        src.execute("PRAGMA query_only = ON")
        src.execute("BEGIN")
        # The first read fixes the moment; the backup copies that read's pages.
        step = int(src.execute("PRAGMA user_version").fetchone()[0])
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()
        during()
        _backup_into(src, dest)
        src.execute("COMMIT")
    except sqlite3.Error as error:
        raise StoreError(f"{path}: {error}") from None
    finally:
        src.close()
    return BackupSnapshot(step)


def sqlite_holds(path: Path) -> int:
    """Rows the file holds beyond a new database's (0: missing, empty or new)."""
    if not path.exists() or path.stat().st_size == 0:
        return 0
    conn = _sqlite(path)
    try:
        tables = [
            row[0]
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if row[0] not in _SEEDED and not row[0].startswith("sqlite_")
        ]
        return sum(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables)
    except sqlite3.Error as error:
        raise StoreError(f"{path}: {error}") from None
    finally:
        conn.close()


_LIVE_WORKERS = "SELECT host, process FROM workers WHERE expires_at > {now}"


def _named(rows: list[Any]) -> list[str]:
    return [f"{host} ({process or 'no process named'})" for host, process in rows]


def sqlite_workers(path: Path) -> list[str]:
    """The workers whose lease on the board at `path` is alive: a restore must wait."""
    if not path.exists() or path.stat().st_size == 0:
        return []
    conn = _sqlite(path)
    try:
        return _named(conn.execute(_LIVE_WORKERS.format(now=time.time())).fetchall())
    except sqlite3.Error:
        return []  # no workers table yet: nobody works on it
    finally:
        conn.close()


def postgres_workers(url: str, password_file: Path | None) -> list[str]:
    conn = _pg_connect(url, password_file)
    try:
        schema = _pg_target_schema(conn)
        found = conn.execute(
            "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'workers'", (schema,)
        ).fetchone()
        if found is None:
            return []
        sql = _LIVE_WORKERS.format(now=time.time()).replace("workers", f'"{schema}".workers')
        return _named(conn.execute(sql).fetchall())
    finally:
        conn.close()


def sqlite_step(path: Path) -> int:
    """The schema step a SQLite file says it is at (its `user_version`), read only."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error as error:
        raise StoreError(f"{path}: {error}") from None


def pg_dump_step(dump: Path) -> int:
    """The schema step a pg_dump file holds in its `chatbot_schema` row, read by
    pg_restore itself (its data as text), not taken from the manifest."""
    argv = ["pg_restore", "--data-only", "--table=chatbot_schema", "--file=-", str(dump)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise StoreError(
            "pg_restore is not installed: install PostgreSQL's client tools "
            "(Debian: apt-get install postgresql-client)"
        ) from None
    if done.returncode != 0:
        raise StoreError(f"pg_restore cannot read {dump}: {_first(Exception(done.stderr))}")
    lines = done.stdout.splitlines()
    starts = [n for n, line in enumerate(lines) if line.startswith("COPY ") and "schema" in line]
    rows = lines[starts[0] + 1 :] if starts else []
    values = rows[: rows.index("\\.")] if "\\." in rows else []
    if len(values) != 1 or not values[0].strip().isdigit():
        raise StoreError(f"{dump} holds no schema step (its chatbot_schema table is missing)")
    return int(values[0].strip())


def restore_sqlite(backup: Path, path: Path) -> None:
    """`backup` into `path` with the backup API; refused while a bot runs on `path`."""
    lock = InstanceLock(path)
    try:
        lock.acquire()
    except StoreError as error:
        raise StoreError(f"{error}; stop it before restoring") from None
    try:
        src = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
        try:
            create_private(path)
            dest = _sqlite(path)
            try:
                src.backup(dest)
                now = time.time()
                dest.execute(_FORGET_WORKERS.format(now=now))
            finally:
                dest.close()
        finally:
            src.close()
    except sqlite3.Error as error:
        raise StoreError(f"{path}: {error}") from None
    finally:
        lock.release()


# --- PostgreSQL ------------------------------------------------------------------


def _pg_connect(url: str, password_file: Path | None) -> Any:
    import psycopg

    options: dict[str, Any] = {"autocommit": True, "connect_timeout": 10}
    if password_file is not None:
        options["password"] = password_file.read_text(encoding="utf-8").strip()
    try:
        return psycopg.connect(url, **options)
    except psycopg.Error as error:
        raise StoreError(f"cannot use the database {redacted(url)}: {_first(error)}") from None


def _first(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else repr(error)


@contextmanager
def _pg_env(password_file: Path | None) -> Iterator[dict[str, str]]:
    """The environment of one pg_dump or pg_restore: the password in a pass file of its
    own (never on the command line, never in this process's environment)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PGPASSWORD", "PGPASSFILE")}
    if password_file is None:
        yield env
        return
    password = password_file.read_text(encoding="utf-8").strip()
    escaped = password.replace("\\", "\\\\").replace(":", "\\:")
    with tempfile.TemporaryDirectory(prefix="chatbot-pg-") as folder:
        passfile = Path(folder) / "pgpass"
        fd = os.open(passfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(f"*:*:*:*:{escaped}\n")
        yield {**env, "PGPASSFILE": str(passfile)}


def _run(argv: list[str], env: dict[str, str], what: str) -> None:
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise StoreError(
            f"{argv[0]} is not installed: install PostgreSQL's client tools "
            "(Debian: apt-get install postgresql-client)"
        ) from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise StoreError(f"{what} failed: {lines[0] if lines else f'exit {done.returncode}'}")


def snapshot_postgres(
    url: str, password_file: Path | None, dest: Path, during: Callable[[], None]
) -> BackupSnapshot:
    conn = _pg_connect(url, password_file)
    try:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        snapshot = conn.execute("SELECT pg_export_snapshot()").fetchone()[0]
        schema = conn.execute("SELECT current_schema()").fetchone()[0]
        row = conn.execute("SELECT version FROM chatbot_schema").fetchone()
        during()
        with _pg_env(password_file) as env:
            argv = ["pg_dump", "--no-password", "--format=custom", f"--snapshot={snapshot}"]
            argv += [f"--schema={schema}", f"--file={dest}", f"--dbname={url}"]
            _run(argv, env, f"pg_dump of {redacted(url)}")
        conn.execute("COMMIT")
    except StoreError:
        raise
    except Exception as error:  # psycopg's, named in words
        raise StoreError(f"database {redacted(url)}: {_first(error)}") from None
    finally:
        conn.close()
    return BackupSnapshot(int(row[0]) if row else 0, schema)


def _pg_target_schema(conn: Any) -> str:
    """The schema the configured connection reads: its search_path's first, even before
    that schema exists (a new database)."""
    current = conn.execute("SELECT current_schema()").fetchone()[0]
    if current:
        return str(current)
    path = conn.execute("SELECT current_setting('search_path')").fetchone()[0]
    first = path.split(",")[0].strip().strip('"')
    return first or "public"


def postgres_holds(url: str, password_file: Path | None) -> int:
    conn = _pg_connect(url, password_file)
    try:
        schema = _pg_target_schema(conn)
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
        ).fetchall()
        total = 0
        for (table,) in tables:
            if table not in _SEEDED:
                total += conn.execute(f'SELECT count(*) FROM "{schema}"."{table}"').fetchone()[0]
        return int(total)
    finally:
        conn.close()


def restore_postgres(
    dump: Path, url: str, password_file: Path | None, schema: str, *, force: bool
) -> None:
    """pg_restore in one transaction (a failure changes nothing), into `schema`."""
    conn = _pg_connect(url, password_file)
    try:
        target = _pg_target_schema(conn)
        if target != schema:
            raise StoreError(
                f"the backup holds schema {schema!r}, but {redacted(url)} reads schema "
                f"{target!r}: point bot.database's search_path at {schema!r}"
            )
        held = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", INSTANCE_LOCK).fetchone()[0]
        if not held:
            raise StoreError(
                f"{redacted(url)}: another bot is already running on this database; "
                "stop it before restoring"
            )
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        with _pg_env(password_file) as env, tempfile.TemporaryDirectory() as folder:
            listing = subprocess.run(
                ["pg_restore", "--list", str(dump)], capture_output=True, text=True, check=False
            )
            if listing.returncode != 0:
                raise StoreError(f"pg_restore cannot read {dump}: {listing.stderr.strip()}")
            # The schema itself exists now; its own entries would only collide.
            entries = [
                line
                for line in listing.stdout.splitlines()
                if " SCHEMA - " not in line and " COMMENT - SCHEMA " not in line
            ]
            chosen = Path(folder) / "entries"
            chosen.write_text("\n".join(entries) + "\n", encoding="utf-8")
            argv = ["pg_restore", "--no-password", "--single-transaction", "--exit-on-error"]
            argv += ["--no-owner", "--no-privileges", f"--use-list={chosen}"]
            if force:
                argv += ["--clean", "--if-exists"]
            argv += [f"--dbname={url}", str(dump)]
            _run(argv, env, f"pg_restore into {redacted(url)}")
        now = time.time()
        conn.execute(f'SET search_path = "{schema}"')
        conn.execute(_FORGET_WORKERS.format(now=now))
    finally:
        conn.close()
