"""Workers on the database, on this host or others: who is alive, with which lanes.

Every process that runs jobs registers here and renews its row on each heartbeat.
A job whose owner's row has expired is an orphan (see `jobs.recover`); `chatbot
check` lists the workers seen recently. Rows stay after a worker stopped (expired
at once), so check can still say when it was last seen; upkeep drops old ones.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from chatbot.store.db import Db

KEEP_S = 7 * 86400


@dataclass(frozen=True)
class WorkerRow:
    id: str
    host: str
    process: str | None
    lanes: list[str]
    started_at: float
    heartbeat_at: float
    expires_at: float

    @property
    def alive(self) -> bool:
        return self.expires_at >= time.time()


async def beat(
    db: Db, worker_id: str, *, host: str, process: str | None, lanes: list[str], lease_s: float
) -> None:
    """Register, or renew: alive for another `lease_s` seconds."""
    now = time.time()
    await db.execute(
        "INSERT INTO workers (id, host, process, lanes, started_at, heartbeat_at, expires_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
        "heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at, "
        "lanes = excluded.lanes",
        (worker_id, host, process, json.dumps(lanes), now, now, now + lease_s),
    )


async def stopped(db: Db, worker_ids: list[str] | tuple[str, ...]) -> None:
    """These workers run nothing any more: their jobs are orphans from now on."""
    if worker_ids:
        marks = ", ".join("?" * len(worker_ids))
        await db.execute(
            f"UPDATE workers SET expires_at = ? WHERE id IN ({marks}) AND expires_at > ?",
            (time.time(), *worker_ids, time.time()),
        )


async def dead_on_host(db: Db, host: str, alive: Callable[[str], bool]) -> list[str]:
    """Workers of this host still counted alive whose process is gone (killed, crashed):
    no need to wait for their lease to know."""
    rows = await db.fetchall(
        "SELECT id, process FROM workers WHERE host = ? AND expires_at >= ?", (host, time.time())
    )
    return [row[0] for row in rows if row[1] and not alive(row[1])]


async def seen_since(db: Db, since: float) -> list[WorkerRow]:
    rows = await db.fetchall(
        "SELECT * FROM workers WHERE heartbeat_at >= ? ORDER BY host, started_at", (since,)
    )
    return [
        WorkerRow(
            id=row["id"],
            host=row["host"],
            process=row["process"],
            lanes=json.loads(row["lanes"]),
            started_at=row["started_at"],
            heartbeat_at=row["heartbeat_at"],
            expires_at=row["expires_at"],
        )
        for row in rows
    ]


async def prune(db: Db, *, now: float | None = None) -> int:
    cutoff = (time.time() if now is None else now) - KEEP_S
    return await db.execute("DELETE FROM workers WHERE heartbeat_at < ?", (cutoff,))
