"""What waits for an owner's answer, and when the owners were last reminded of it.

A reminder is recorded in the transaction that posts it, after the subject was
read open in that same transaction: a restart neither repeats nor forgets one, and
an answer that came first means no reminder at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatbot.store.db import Db

QUESTION, REQUEST, APPROVAL = "question", "request", "approval"

# Each subject: its open rows (id, card, created, a short text, what kind of question)
# and the purpose of
# the message that first asked it (chat_messages links that message to the row).
_OPEN = {
    QUESTION: (
        "SELECT q.id, c.slug, q.created_at, q.text, q.kind FROM questions q "
        "JOIN cards c ON c.id = q.card_id WHERE q.state = 'open'",
        "SELECT 1 FROM questions WHERE id = ? AND state = 'open'",
    ),
    REQUEST: (
        "SELECT id, NULL, created_at, '/' || command || ' ' || argument, NULL FROM requests "
        "WHERE state = 'pending'",
        "SELECT 1 FROM requests WHERE id = ? AND state = 'pending'",
    ),
    APPROVAL: (
        "SELECT t.id, c.slug, t.created_at, t.text, NULL FROM run_talk t "
        "JOIN cards c ON c.id = t.card_id WHERE t.kind = 'approval' AND t.state = 'open'",
        "SELECT 1 FROM run_talk WHERE id = ? AND kind = 'approval' AND state = 'open'",
    ),
}
_LINK = {QUESTION: "question_id", REQUEST: "request_id", APPROVAL: "talk_id"}


@dataclass(frozen=True)
class Waiting:
    subject: str
    id: int
    slug: str | None
    created_at: float
    text: str
    #: From the reminders table; zeros/None when never reminded nor held.
    reminded_at: float | None = None
    reminders: int = 0
    rung_at: float | None = None
    held_since: float | None = None
    #: A question's kind (a split plan is approved, not answered); None for the others.
    question_kind: str | None = None

    def due_at(self, remind_after_s: float, every_s: float) -> float:
        """The first reminder comes `remind_after_s` after the owners were rung
        (asked, or told by quiet hours' digest); later ones `every_s` apart."""
        if self.reminders and self.reminded_at is not None:
            return self.reminded_at + every_s
        return (self.rung_at or self.created_at) + remind_after_s


@dataclass(frozen=True)
class AskedMessage:
    """A message that asked: where a reminder replies."""

    transport: str
    room: str
    message_id: str
    target_kind: str | None
    card_id: int | None = None


async def waiting(db: Db) -> list[Waiting]:
    """Everything open, oldest first, with its reminder state."""
    found = []
    for subject, (query, _) in _OPEN.items():
        for row in await db.fetchall(query):
            state = await db.fetchone(
                "SELECT reminded_at, reminders, rung_at, held_since FROM reminders "
                "WHERE subject = ? AND subject_id = ?",
                (subject, row[0]),
            )
            reminded_at, reminders, rung_at, held_since = (
                tuple(state) if state else (None, 0, None, None)
            )
            found.append(
                Waiting(
                    subject,
                    row[0],
                    row[1],
                    row[2],
                    row[3],
                    reminded_at,
                    reminders,
                    rung_at,
                    held_since,
                    question_kind=row[4],
                )
            )
    return sorted(found, key=lambda w: (w.created_at, w.subject, w.id))


async def is_open(db: Db, subject: str, subject_id: int) -> bool:
    return await db.fetchone(_OPEN[subject][1], (subject_id,)) is not None


async def originals(db: Db, subject: str, subject_id: int) -> list[AskedMessage]:
    rows = await db.fetchall(
        "SELECT m.transport, m.room, m.message_id, "
        "(SELECT o.target_kind FROM outbox o WHERE o.transport = m.transport "
        "AND o.message_id = m.message_id LIMIT 1), m.card_id "
        f"FROM chat_messages m WHERE m.{_LINK[subject]} = ? AND m.purpose = ? ORDER BY m.id",
        (subject_id, subject),
    )
    return [AskedMessage(*row) for row in rows]


_UPSERT = (
    "INSERT INTO reminders (subject, subject_id, reminded_at, reminders, rung_at, held_since) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (subject, subject_id) DO UPDATE SET "
)


async def reminded(db: Db, subject: str, subject_id: int, at: float) -> None:
    await db.execute(
        _UPSERT + "reminded_at = excluded.reminded_at, "
        "reminders = reminders.reminders + 1, held_since = NULL",
        (subject, subject_id, at, 1, None, None),
    )


async def rung(db: Db, subject: str, subject_id: int, at: float) -> None:
    await db.execute(
        _UPSERT + "rung_at = excluded.rung_at, held_since = NULL",
        (subject, subject_id, None, 0, at, None),
    )


async def hold(db: Db, subject: str, subject_id: int, at: float) -> None:
    """A mention of it waits for the end of quiet hours (the first hold counts)."""
    await db.execute(
        _UPSERT + "held_since = COALESCE(reminders.held_since, excluded.held_since)",
        (subject, subject_id, None, 0, None, at),
    )
