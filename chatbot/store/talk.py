"""What people say to a running agent, and what it asks them: one row each.

A steer or an interrupt is written by whoever received the command (the chat, the
web) and taken by the worker that runs the job, on this host or another: the row is
the message between them, so it survives the process that wrote it and reaches a
worker on any host. An approval request is written by the worker and answered by an
owner; the first answer wins, like a question's.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from chatbot.store.db import Db, Row

#: States a steer or interrupt goes through: written, handed to the agent's CLI, and
#: then taken by the agent or refused (the turn had ended).
OPEN, SENT, TAKEN, REFUSED = "open", "sent", "taken", "refused"
#: An approval's ends: answered by an owner, or by the bot (policy, timeout, flood,
#: a restart that ended the run).
ALLOWED, DENIED, TIMED_OUT, CLOSED = "allowed", "denied", "timed_out", "closed"
APPROVAL_ENDS = frozenset({ALLOWED, DENIED, TIMED_OUT, CLOSED})


@dataclass(frozen=True)
class TalkRow:
    id: int
    job_id: int
    card_id: int
    kind: str
    text: str
    tool: str | None
    cwd: str | None
    actor: str | None
    state: str
    reason: str | None
    created_at: float
    done_at: float | None

    @classmethod
    def from_row(cls, row: Row) -> TalkRow:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})

    @property
    def is_open(self) -> bool:
        return self.state == OPEN


async def add(
    db: Db,
    job_id: int,
    card_id: int,
    kind: str,
    text: str,
    *,
    actor: str | None = None,
    tool: str | None = None,
    cwd: str | None = None,
    state: str = OPEN,
    reason: str | None = None,
) -> TalkRow:
    now = time.time()
    talk_id = await db.insert(
        "INSERT INTO run_talk (job_id, card_id, kind, text, tool, cwd, actor, state, reason, "
        "created_at, done_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            job_id,
            card_id,
            kind,
            text,
            tool,
            cwd,
            actor,
            state,
            reason,
            now,
            None if state == OPEN else now,
        ),
    )
    found = await get(db, talk_id)
    assert found is not None
    return found


async def get(db: Db, talk_id: int) -> TalkRow | None:
    row = await db.fetchone("SELECT * FROM run_talk WHERE id = ?", (talk_id,))
    return TalkRow.from_row(row) if row else None


async def many(db: Db, talk_ids: Iterable[int]) -> list[TalkRow]:
    ids = tuple(talk_ids)
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    rows = await db.fetchall(f"SELECT * FROM run_talk WHERE id IN ({marks}) ORDER BY id", ids)
    return [TalkRow.from_row(r) for r in rows]


async def inbox(db: Db, job_ids: Iterable[int]) -> list[TalkRow]:
    """Steers and interrupts for these jobs that no worker has handed on yet, oldest first."""
    ids = tuple(job_ids)
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    rows = await db.fetchall(
        f"SELECT * FROM run_talk WHERE job_id IN ({marks}) AND kind IN ('steer', 'interrupt') "
        "AND state = 'open' ORDER BY id",
        ids,
    )
    return [TalkRow.from_row(r) for r in rows]


async def mark(
    db: Db,
    talk_id: int,
    state: str,
    *,
    was: tuple[str, ...] = (OPEN,),
    actor: str | None = None,
    reason: str | None = None,
) -> TalkRow | None:
    """Move a row on from one of the states in `was`; None when it had moved on already
    (the first answer to an approval wins)."""
    marks = ", ".join("?" * len(was))
    changed = await db.execute(
        "UPDATE run_talk SET state = ?, actor = COALESCE(?, actor), reason = COALESCE(?, reason), "
        f"done_at = ? WHERE id = ? AND state IN ({marks})",
        (state, actor, reason, time.time(), talk_id, *was),
    )
    return await get(db, talk_id) if changed == 1 else None


async def open_approvals(db: Db, card_id: int) -> list[TalkRow]:
    rows = await db.fetchall(
        "SELECT * FROM run_talk WHERE card_id = ? AND kind = 'approval' AND state = 'open' "
        "ORDER BY id",
        (card_id,),
    )
    return [TalkRow.from_row(r) for r in rows]


async def approvals_of_job(db: Db, job_id: int) -> int:
    row = await db.fetchone(
        "SELECT count(*) FROM run_talk WHERE job_id = ? AND kind = 'approval'", (job_id,)
    )
    return int(row[0]) if row else 0


async def close_for_job(db: Db, job_id: int, reason: str) -> list[TalkRow]:
    """A job's run is gone (it ended, the bot restarted): what still waits is closed.
    Returns the rows it closed (steers refused, approvals closed)."""
    rows = await db.fetchall(
        "SELECT * FROM run_talk WHERE job_id = ? AND state IN ('open', 'sent')", (job_id,)
    )
    closed = []
    for found in map(TalkRow.from_row, rows):
        state = CLOSED if found.kind == "approval" else REFUSED
        row = await mark(db, found.id, state, was=(OPEN, SENT), reason=reason)
        if row is not None:
            closed.append(row)
    return closed


async def set_talks(db: Db, job_id: int, talks: bool) -> None:
    await db.execute("UPDATE jobs SET talks = ? WHERE id = ?", (int(talks), job_id))


async def for_card(db: Db, card_id: int, limit: int = 20) -> list[TalkRow]:
    rows = await db.fetchall(
        "SELECT * FROM run_talk WHERE card_id = ? ORDER BY id DESC LIMIT ?", (card_id, limit)
    )
    return [TalkRow.from_row(r) for r in rows]
