"""Questions to the owner as rows, so an answer resolves exactly the question it answers.

A card has at most one open question of the pipeline's own (the planner's, the
operator's, a split plan's); a working agent's questions (kind `agent`) belong to the
job that asked them instead, and a few may wait at once beside it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chatbot.store.db import Db, Row

MAX_OPTIONS = 4
#: A question a builder or fixer asks while it works (board/agent_asks.py).
AGENT = "agent"


@dataclass(frozen=True)
class QuestionRow:
    id: int
    card_id: int
    kind: str
    text: str
    options: list[str]
    state: str
    answer: str | None
    answered_by: str | None
    created_at: float
    answered_at: float | None
    #: The job that asked it (an agent's question); None for the pipeline's own.
    job_id: int | None = None
    #: How it was answered: "reply", "option", "web", "command".
    answered_via: str | None = None
    #: Why it closed unanswered (a timeout, the run's end).
    closed_reason: str | None = None

    @classmethod
    def from_row(cls, row: Row | Mapping[str, Any]) -> QuestionRow:
        values = dict(row)
        values["options"] = json.loads(values["options"])
        return cls(**values)


class AlreadyAnswered(Exception):
    def __init__(self, question: QuestionRow):
        super().__init__(f"question {question.id} was already answered")
        self.question = question


async def ask(db: Db, card_id: int, kind: str, text: str, options: list[str]) -> QuestionRow:
    """Open a question; an older open question of the same card is superseded."""
    if len(options) > MAX_OPTIONS:
        raise ValueError(f"at most {MAX_OPTIONS} options")
    await db.execute(
        "UPDATE questions SET state = 'cancelled' "
        "WHERE card_id = ? AND state = 'open' AND kind <> 'agent'",
        (card_id,),
    )
    question_id = await db.insert(
        "INSERT INTO questions (card_id, kind, text, options, created_at) VALUES (?, ?, ?, ?, ?)",
        (card_id, kind, text, json.dumps(options, ensure_ascii=False), time.time()),
    )
    row = await get(db, question_id)
    assert row is not None
    return row


async def get(db: Db, question_id: int) -> QuestionRow | None:
    row = await db.fetchone("SELECT * FROM questions WHERE id = ?", (question_id,))
    return QuestionRow.from_row(row) if row else None


async def ask_agent(
    db: Db, job_id: int, card_id: int, text: str, options: list[str]
) -> QuestionRow:
    """Open an agent's question; nothing else of the card is superseded."""
    if len(options) > MAX_OPTIONS:
        raise ValueError(f"at most {MAX_OPTIONS} options")
    question_id = await db.insert(
        "INSERT INTO questions (card_id, kind, text, options, created_at, job_id) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (card_id, AGENT, text, json.dumps(options, ensure_ascii=False), time.time(), job_id),
    )
    row = await get(db, question_id)
    assert row is not None
    return row


async def open_of_job(db: Db, job_id: int) -> list[QuestionRow]:
    rows = await db.fetchall(
        "SELECT * FROM questions WHERE job_id = ? AND state = 'open' AND kind = 'agent' "
        "ORDER BY id",
        (job_id,),
    )
    return [QuestionRow.from_row(r) for r in rows]


async def many(db: Db, question_ids: Sequence[int]) -> list[QuestionRow]:
    if not question_ids:
        return []
    marks = ", ".join("?" for _ in question_ids)
    rows = await db.fetchall(
        f"SELECT * FROM questions WHERE id IN ({marks}) ORDER BY id", tuple(question_ids)
    )
    return [QuestionRow.from_row(r) for r in rows]


async def close(db: Db, question_id: int, reason: str) -> QuestionRow | None:
    """Cancel it with `reason` if it is still open; None when it was not."""
    changed = await db.execute(
        "UPDATE questions SET state = 'cancelled', closed_reason = ?, answered_at = ? "
        "WHERE id = ? AND state = 'open'",
        (reason, time.time(), question_id),
    )
    return await get(db, question_id) if changed == 1 else None


async def open_for_card(db: Db, card_id: int) -> QuestionRow | None:
    """The card's oldest open question (an agent may have a few open)."""
    row = await db.fetchone(
        "SELECT * FROM questions WHERE card_id = ? AND state = 'open' ORDER BY id LIMIT 1",
        (card_id,),
    )
    return QuestionRow.from_row(row) if row else None


async def all_open(db: Db) -> list[QuestionRow]:
    rows = await db.fetchall("SELECT * FROM questions WHERE state = 'open' ORDER BY id")
    return [QuestionRow.from_row(r) for r in rows]


async def resolve(
    db: Db, question_id: int, answer: str, answered_by: str, via: str | None = None
) -> QuestionRow:
    """Mark answered; the first valid answer wins, a later one raises AlreadyAnswered."""
    changed = await db.execute(
        "UPDATE questions SET state = 'answered', answer = ?, answered_by = ?, answered_at = ?, "
        "answered_via = ? WHERE id = ? AND state = 'open'",
        (answer, answered_by, time.time(), via, question_id),
    )
    row = await get(db, question_id)
    if row is None:
        raise LookupError(f"no question {question_id}")
    if changed != 1:
        raise AlreadyAnswered(row)
    return row


async def open_of_card(db: Db, card_id: int) -> list[QuestionRow]:
    rows = await db.fetchall(
        "SELECT * FROM questions WHERE card_id = ? AND state = 'open' ORDER BY id", (card_id,)
    )
    return [QuestionRow.from_row(r) for r in rows]
