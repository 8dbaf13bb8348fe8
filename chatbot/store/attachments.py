"""The rows of kept files: what each is, who sent it from where, what it went with.

A file is a row from the moment it is kept. Sent without naming its card it is loose
(no card, purpose '') and waits for /attach; then it belongs to a card, for what it
was sent with (card, steer, answer, draft) or as a file the bot sent (outgoing). The
bytes live in the files folder under `sha256` (blobs.py); several rows may share them.
When the quota drops a file, its row stays with `gone_at` set, so the card still says
what was attached.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chatbot.store.db import Db, Row


@dataclass(frozen=True)
class AttachmentRow:
    id: int
    sha256: str
    size: int
    content_type: str
    kind: str
    name: str
    card_id: int | None
    purpose: str
    question_id: int | None
    actor: str
    transport: str
    chat: str
    message_id: str
    encrypted: bool
    created_at: float
    gone_at: float | None

    @classmethod
    def from_row(cls, row: Row) -> AttachmentRow:
        values = {name: row[name] for name in cls.__dataclass_fields__}
        values["encrypted"] = bool(values["encrypted"])
        return cls(**values)


@dataclass(frozen=True)
class NewAttachment:
    sha256: str
    size: int
    content_type: str
    kind: str
    name: str
    actor: str = ""
    transport: str = ""
    chat: str = ""
    message_id: str = ""
    encrypted: bool = False
    purpose: str = ""
    card_id: int | None = None


async def add(db: Db, new: NewAttachment, *, now: float | None = None) -> AttachmentRow:
    row_id = await db.insert(
        "INSERT INTO attachments (sha256, size, content_type, kind, name, card_id, purpose, "
        "actor, transport, chat, message_id, encrypted, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            new.sha256,
            new.size,
            new.content_type,
            new.kind,
            new.name,
            new.card_id,
            new.purpose,
            new.actor,
            new.transport,
            new.chat,
            new.message_id,
            1 if new.encrypted else 0,
            time.time() if now is None else now,
        ),
    )
    found = await get(db, row_id)
    assert found is not None
    return found


async def get(db: Db, attachment_id: int) -> AttachmentRow | None:
    row = await db.fetchone("SELECT * FROM attachments WHERE id = ?", (attachment_id,))
    return AttachmentRow.from_row(row) if row else None


async def many(db: Db, ids: Sequence[int]) -> list[AttachmentRow]:
    """The rows of `ids` that exist, in the order asked."""
    found: dict[int, AttachmentRow] = {}
    for attachment_id in dict.fromkeys(ids):
        row = await get(db, attachment_id)
        if row is not None:
            found[row.id] = row
    return [found[i] for i in dict.fromkeys(ids) if i in found]


async def of_card(db: Db, card_id: int, limit: int = 200) -> list[AttachmentRow]:
    """The card's files, oldest first, dropped ones too."""
    rows = await db.fetchall(
        "SELECT * FROM attachments WHERE card_id = ? ORDER BY id LIMIT ?", (card_id, limit)
    )
    return [AttachmentRow.from_row(row) for row in rows]


async def of_cards(db: Db) -> dict[int, list[AttachmentRow]]:
    """Every card's files by card id, oldest first (for a listing of all cards)."""
    rows = await db.fetchall("SELECT * FROM attachments WHERE card_id IS NOT NULL ORDER BY id")
    found: dict[int, list[AttachmentRow]] = {}
    for row in rows:
        found.setdefault(row["card_id"], []).append(AttachmentRow.from_row(row))
    return found


async def loose(db: Db, actor: str, since: float) -> list[AttachmentRow]:
    """`actor`'s files sent without their card since `since`, oldest first."""
    rows = await db.fetchall(
        "SELECT * FROM attachments WHERE actor = ? AND card_id IS NULL AND purpose = '' "
        "AND request_id IS NULL AND gone_at IS NULL AND created_at >= ? ORDER BY id",
        (actor, since),
    )
    return [AttachmentRow.from_row(row) for row in rows]


async def attach(
    db: Db,
    ids: Iterable[int],
    card_id: int,
    purpose: str,
    question_id: int | None,
    talk_id: int | None = None,
) -> None:
    for attachment_id in ids:
        await db.execute(
            "UPDATE attachments SET card_id = ?, purpose = ?, question_id = ?, talk_id = ? "
            "WHERE id = ?",
            (card_id, purpose, question_id, talk_id, attachment_id),
        )


async def of_talk(db: Db, talk_id: int) -> list[AttachmentRow]:
    """The files a steer came with."""
    rows = await db.fetchall("SELECT * FROM attachments WHERE talk_id = ? ORDER BY id", (talk_id,))
    return [AttachmentRow.from_row(row) for row in rows]


async def wait_with(db: Db, ids: Iterable[int], request_id: int) -> None:
    """Loose files that wait with a requester's request (no longer loose)."""
    for attachment_id in ids:
        await db.execute(
            "UPDATE attachments SET request_id = ? WHERE id = ? AND card_id IS NULL",
            (request_id, attachment_id),
        )


async def of_request(db: Db, request_id: int) -> list[AttachmentRow]:
    rows = await db.fetchall(
        "SELECT * FROM attachments WHERE request_id = ? ORDER BY id", (request_id,)
    )
    return [AttachmentRow.from_row(row) for row in rows]


async def kept_bytes(db: Db) -> int:
    """The bytes the kept files take: each hash counted once, dropped ones not at all."""
    row = await db.fetchone(
        "SELECT COALESCE(sum(size), 0) FROM (SELECT sha256, max(size) AS size "
        "FROM attachments WHERE gone_at IS NULL GROUP BY sha256) AS kept"
    )
    return int(row[0]) if row else 0


async def is_kept(db: Db, sha256: str) -> bool:
    """Whether a row not dropped still needs the bytes under `sha256`."""
    row = await db.fetchone(
        "SELECT 1 FROM attachments WHERE sha256 = ? AND gone_at IS NULL LIMIT 1", (sha256,)
    )
    return row is not None


async def droppable(
    db: Db, finished_phases: Sequence[str], loose_before: float
) -> list[AttachmentRow]:
    """Files the quota may drop, oldest first: those of finished cards, and files with no
    card (loose, or sent by the bot) older than `loose_before`."""
    marks = ", ".join("?" for _ in finished_phases)
    rows = await db.fetchall(
        "SELECT a.* FROM attachments a LEFT JOIN cards c ON c.id = a.card_id "
        f"WHERE a.gone_at IS NULL AND (c.phase IN ({marks}) "
        "OR (a.card_id IS NULL AND a.created_at < ?)) ORDER BY a.created_at, a.id",
        (*finished_phases, loose_before),
    )
    return [AttachmentRow.from_row(row) for row in rows]


async def mark_gone(db: Db, attachment_id: int, at: float) -> None:
    await db.execute(
        "UPDATE attachments SET gone_at = ? WHERE id = ? AND gone_at IS NULL", (at, attachment_id)
    )
