"""`chatbot check`: the database (reachable, schema version) and the workers it has seen.

With several hosts the questions are "can this host reach the board?" and "which
workers are alive, where, on which lanes?": both are answered from the database
itself, since the workers register there (chatbot/store/workers.py).
"""

from __future__ import annotations

import time

from chatbot.app.startup import open_store
from chatbot.config import Config
from chatbot.notify.format import duration
from chatbot.store import Store, StoreError, StoreUnwritable
from chatbot.store import workers as worker_store
from chatbot.store.migrations import LATEST
from runners.gitcmd import WorkspaceError, run_git

# Workers whose last heartbeat is older than this are not listed.
SEEN_WITHIN_S = 24 * 3600


async def check_database(config: Config, connect: bool) -> list[tuple[str, bool]]:
    """(line, fine) pairs: the database and the workers seen recently; not fine when
    the database is unusable."""
    found: list[tuple[str, bool]] = []
    sqlite = config.bot.sqlite_file
    if sqlite is not None and not sqlite.exists():
        return [(f"database: {sqlite} (SQLite; made at the first start)", True)]
    if sqlite is None and not connect:
        login = "" if config.bot.database_password_file else "; no bot.database_password_file"
        offline = (
            f"database: {config.bot.database} (PostgreSQL{login}; not contacted: --no-connect)"
        )
        return [(offline, True)]
    try:
        store = await open_store(config)
    except StoreUnwritable as error:
        return [(_not_writable(str(error)), False)]
    except StoreError as error:
        return [(f"database: NOT usable: {error}", False)]
    try:
        version = await store.schema_version()
        engine = "SQLite" if sqlite is not None else "PostgreSQL, reachable"
        found.append(
            (f"database: {store.name} ({engine}), schema version {version} of {LATEST}", True)
        )
        found.append(await _writable(store))
        now = time.time()
        seen = await worker_store.seen_since(store.reader, now - SEEN_WITHIN_S)
        if not seen:
            found.append(("workers: none seen in the last 24 h", True))
        for worker in seen:
            state = "alive" if worker.alive else "stopped"
            line = (
                f"worker on {worker.host} ({worker.id[:8]}): {state}, lanes "
                f"{', '.join(worker.lanes) or '-'}, last heartbeat "
                f"{duration(max(0.0, now - worker.heartbeat_at))} ago"
            )
            found.append((line, True))
        return found
    finally:
        await store.close()


async def _writable(store: Store) -> tuple[str, bool]:
    """Whether the database takes a write now (a full disk takes none): one small
    write, harmless beside a running bot."""
    try:
        await store.probe_write()
    except StoreError:
        pass  # the health has the reason
    if store.health.problem is not None:
        return _not_writable(store.health.problem), False
    return "database: writable", True


def _not_writable(problem: str) -> str:
    return (
        f"database: NOT writable: {problem}. A running bot refuses changes meanwhile and "
        "resumes by itself once the database takes writes again (free space on its disk); "
        "a bot cannot start until then"
    )


async def remote_line(config: Config, connect: bool) -> tuple[str, bool]:
    """The git remote workers clone and push to: reachable, with which branches."""
    remote, checkout = config.bot.remote, config.bot.checkout
    assert remote is not None
    where = f"repository: git remote {remote}, this host's clone {checkout}"
    if not (checkout / ".git").exists():
        where += " (cloned at the first start)"
    if not connect:
        return where, True
    folder = checkout if checkout.is_dir() else config.source.parent
    try:
        heads = await run_git(folder, "ls-remote", "--heads", remote)
    except WorkspaceError as error:
        return f"{where}; NOT reachable: {error}", False
    count = len([line for line in heads.out.splitlines() if line.strip()])
    return f"{where}; reachable, {count} branches", True
