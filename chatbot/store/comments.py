"""Owners' comments on lines of a card's change, and the files of a change chat showed.

A comment is a row from the moment it is written: it waits (open), is given to a run
(sent: in the fixer's prompt or as a steer to the running agent) and is answered by
the next commit that run makes. The reviewer of that commit is shown what it answers.
A diff view is one file of a change as a chat message showed it, so a reply quoting
lines of that message finds the file and commit again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from chatbot.store.db import Db, Row

OPEN, SENT, ANSWERED = "open", "sent", "answered"
UNANSWERED = (OPEN, SENT)


@dataclass(frozen=True)
class LineComment:
    id: int
    card_id: int
    commit_hash: str
    path: str
    line_start: int | None
    line_end: int | None
    quote: str
    body: str
    author: str
    state: str
    job_id: int | None
    answered_commit: str | None
    created_at: float
    answered_at: float | None

    @classmethod
    def from_row(cls, row: Row) -> LineComment:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})

    @property
    def where(self) -> str:
        """`path:12`, `path:12-15` or `path` (the whole file)."""
        if self.line_start is None:
            return self.path
        if self.line_end is None or self.line_end == self.line_start:
            return f"{self.path}:{self.line_start}"
        return f"{self.path}:{self.line_start}-{self.line_end}"


@dataclass(frozen=True)
class DiffView:
    id: int
    card_id: int
    commit_hash: str
    path: str


async def add(
    db: Db,
    card_id: int,
    *,
    commit_hash: str,
    path: str,
    lines: tuple[int, int] | None,
    quote: str,
    body: str,
    author: str,
) -> LineComment:
    start, end = lines if lines is not None else (None, None)
    comment_id = await db.insert(
        "INSERT INTO line_comments (card_id, commit_hash, path, line_start, line_end, quote, "
        "body, author, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (card_id, commit_hash, path, start, end, quote, body, author, OPEN, time.time()),
    )
    found = await get(db, comment_id)
    assert found is not None
    return found


async def get(db: Db, comment_id: int) -> LineComment | None:
    row = await db.fetchone("SELECT * FROM line_comments WHERE id = ?", (comment_id,))
    return LineComment.from_row(row) if row else None


async def of_card(db: Db, card_id: int, limit: int = 200) -> list[LineComment]:
    """The card's comments, oldest first (as they were written)."""
    rows = await db.fetchall(
        "SELECT * FROM line_comments WHERE card_id = ? ORDER BY id LIMIT ?", (card_id, limit)
    )
    return [LineComment.from_row(row) for row in rows]


async def unanswered(db: Db, card_id: int) -> list[LineComment]:
    rows = await db.fetchall(
        "SELECT * FROM line_comments WHERE card_id = ? AND state IN (?, ?) ORDER BY id",
        (card_id, *UNANSWERED),
    )
    return [LineComment.from_row(row) for row in rows]


async def answered_by(db: Db, card_id: int, commit_hash: str) -> list[LineComment]:
    rows = await db.fetchall(
        "SELECT * FROM line_comments WHERE card_id = ? AND answered_commit = ? ORDER BY id",
        (card_id, commit_hash),
    )
    return [LineComment.from_row(row) for row in rows]


async def mark_sent(db: Db, comment_ids: Sequence[int], job_id: int | None) -> None:
    for comment_id in comment_ids:
        await db.execute(
            "UPDATE line_comments SET state = ?, job_id = ? WHERE id = ? AND state IN (?, ?)",
            (SENT, job_id, comment_id, *UNANSWERED),
        )


async def answer_sent(db: Db, card_id: int, commit_hash: str) -> int:
    """A run's commit answers what that run was given; how many comments it answered."""
    found = await db.fetchone(
        "SELECT count(*) FROM line_comments WHERE card_id = ? AND state = ?", (card_id, SENT)
    )
    await db.execute(
        "UPDATE line_comments SET state = ?, answered_commit = ?, answered_at = ? "
        "WHERE card_id = ? AND state = ?",
        (ANSWERED, commit_hash, time.time(), card_id, SENT),
    )
    return int(found[0]) if found else 0


async def count_unanswered(db: Db) -> int:
    found = await db.fetchone(
        "SELECT count(*) FROM line_comments WHERE state IN (?, ?)", UNANSWERED
    )
    return int(found[0]) if found else 0


async def add_view(db: Db, card_id: int, commit_hash: str, path: str) -> DiffView:
    view_id = await db.insert(
        "INSERT INTO diff_views (card_id, commit_hash, path, created_at) VALUES (?, ?, ?, ?)",
        (card_id, commit_hash, path, time.time()),
    )
    return DiffView(view_id, card_id, commit_hash, path)


async def view(db: Db, view_id: int) -> DiffView | None:
    row = await db.fetchone(
        "SELECT id, card_id, commit_hash, path FROM diff_views WHERE id = ?", (view_id,)
    )
    return DiffView(row[0], row[1], row[2], row[3]) if row else None
