"""Questions to the owner as rows, so an answer resolves exactly the question it answers."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from chatbot.store.db import Db, Row

MAX_OPTIONS = 4


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

    @classmethod
    def from_row(cls, row: Row) -> QuestionRow:
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
        "UPDATE questions SET state = 'cancelled' WHERE card_id = ? AND state = 'open'", (card_id,)
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


async def open_for_card(db: Db, card_id: int) -> QuestionRow | None:
    row = await db.fetchone(
        "SELECT * FROM questions WHERE card_id = ? AND state = 'open'", (card_id,)
    )
    return QuestionRow.from_row(row) if row else None


async def all_open(db: Db) -> list[QuestionRow]:
    rows = await db.fetchall("SELECT * FROM questions WHERE state = 'open' ORDER BY id")
    return [QuestionRow.from_row(r) for r in rows]


async def resolve(db: Db, question_id: int, answer: str, answered_by: str) -> QuestionRow:
    """Mark answered; the first valid answer wins, a later one raises AlreadyAnswered."""
    changed = await db.execute(
        "UPDATE questions SET state = 'answered', answer = ?, answered_by = ?, answered_at = ? "
        "WHERE id = ? AND state = 'open'",
        (answer, answered_by, time.time(), question_id),
    )
    row = await get(db, question_id)
    if row is None:
        raise LookupError(f"no question {question_id}")
    if changed != 1:
        raise AlreadyAnswered(row)
    return row
