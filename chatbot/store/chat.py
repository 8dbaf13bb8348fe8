"""The outbox of notifications and the chat messages the bot has posted.

A notification is a row first and a chat message second: produced inside the
transaction that caused it, sent later by the outbox sender, marked sent only
when the server took it. What was posted is remembered (transport, room,
message id -> card, question, request) so a reply or reaction on it finds its
subject.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass

from chatbot.store.db import Db, Row, Store


@dataclass(frozen=True)
class Post:
    transport: str
    target: str
    text: str
    target_kind: str = "room"  # or "person" for a direct chat
    html: str | None = None
    reply_to: str | None = None
    card_id: int | None = None
    question_id: int | None = None
    request_id: int | None = None
    purpose: str = "notice"
    #: The outbox row (of the same place) whose message this one's text replaces.
    replaces_id: int | None = None
    #: Identities on this transport whose phones the message should ring.
    mentions: tuple[str, ...] = ()
    #: The agent's approval request this message asks about (store/talk.py).
    talk_id: int | None = None
    #: The file of a card's change this message shows (store/comments.py).
    diff_view_id: int | None = None
    #: A kept file (store/attachments.py) the message sends, with `text` as its caption.
    attachment_id: int | None = None
    #: A working agent's follow-up card proposal the message shows (store/proposals.py).
    proposal_id: int | None = None


@dataclass(frozen=True)
class OutboxRow:
    id: int
    transport: str
    room: str
    target_kind: str
    text: str
    html: str | None
    reply_to: str | None
    card_id: int | None
    question_id: int | None
    request_id: int | None
    purpose: str
    state: str
    attempts: int
    last_error: str | None
    txn_id: str
    message_id: str | None
    created_at: float
    sent_at: float | None
    send_started_at: float | None = None
    replaces_id: int | None = None
    mentions: tuple[str, ...] = ()
    talk_id: int | None = None
    diff_view_id: int | None = None
    attachment_id: int | None = None
    proposal_id: int | None = None

    @classmethod
    def from_row(cls, row: Row) -> OutboxRow:
        values = {name: row[name] for name in cls.__dataclass_fields__}
        values["mentions"] = tuple(json.loads(values["mentions"] or "[]"))
        return cls(**values)


@dataclass(frozen=True)
class Posted:
    transport: str
    room: str
    message_id: str
    card_id: int | None
    question_id: int | None
    request_id: int | None
    purpose: str
    talk_id: int | None = None
    diff_view_id: int | None = None
    attachment_id: int | None = None
    proposal_id: int | None = None

    @property
    def asks_approval(self) -> bool:
        """An agent's approval request, or its reminder: 👍, 👎 and replies answer both."""
        return self.talk_id is not None and self.purpose in ("approval", "reminder")


_ENQUEUE = (
    "INSERT INTO outbox (transport, room, target_kind, text, html, reply_to, card_id, "
    "question_id, request_id, purpose, txn_id, created_at, replaces_id, mentions, talk_id, "
    "diff_view_id, attachment_id, proposal_id) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _row(post: Post) -> tuple[object, ...]:
    return (
        post.transport,
        post.target,
        post.target_kind,
        post.text,
        post.html,
        post.reply_to,
        post.card_id,
        post.question_id,
        post.request_id,
        post.purpose,
        # Stable across resends: Matrix uses it as the transaction id, XMPP as the
        # message id, so a resend after a crash posts once.
        f"board-{uuid.uuid4().hex}",
        time.time(),
        post.replaces_id,
        json.dumps(list(post.mentions)) if post.mentions else None,
        post.talk_id,
        post.diff_view_id,
        post.attachment_id,
        post.proposal_id,
    )


async def enqueue(db: Db, post: Post) -> int:
    if post.replaces_id is not None:
        # Only the newest text of a message matters: an older edit still waiting goes.
        # It may be on its way to the server right now, and SQLite gives the next row
        # the id of a deleted last one: so every write to a row below names it by its
        # id and its txn_id (see `_THIS_ROW`), or the new edit would be marked with the
        # old one's send and never go out.
        await db.execute(
            "DELETE FROM outbox WHERE replaces_id = ? AND state = 'pending'", (post.replaces_id,)
        )
    return await db.insert(_ENQUEUE, _row(post))


async def row(db: Db, row_id: int) -> OutboxRow | None:
    found = await db.fetchone("SELECT * FROM outbox WHERE id = ?", (row_id,))
    return OutboxRow.from_row(found) if found else None


async def enqueue_alone(store: Store, post: Post) -> None:
    """A post that reports no change (an answer to /status, a refusal): one statement."""
    await store.write_one(_ENQUEUE, _row(post), wake=True)


async def pending(db: Db, transport: str, limit: int = 100) -> list[OutboxRow]:
    rows = await db.fetchall(
        "SELECT * FROM outbox WHERE transport = ? AND state = 'pending' ORDER BY id LIMIT ?",
        (transport, limit),
    )
    return [OutboxRow.from_row(r) for r in rows]


# A post whose text is a credential (a /web sign-in link): kept only until delivered,
# then replaced, so that neither the outbox nor a backup holds a usable link (issue 33).
CREDENTIAL_PURPOSE = "signin_link"
DELIVERED_CREDENTIAL = "(a one-time sign-in link was delivered here; it is not kept)"


# A row as read, not whatever row has its id now: a superseded edit's id can be the
# next row's (`enqueue`), and its txn_id is unique for good.
_THIS_ROW = "WHERE id = ? AND txn_id = ?"


async def mark_sent(db: Db, row: OutboxRow, message_id: str) -> None:
    """Sent, and remembered as posted, in one step."""
    await db.execute(
        "UPDATE outbox SET state = 'sent', message_id = ?, sent_at = ?, attempts = attempts + 1 "
        + _THIS_ROW,
        (message_id, time.time(), row.id, row.txn_id),
    )
    if row.purpose == CREDENTIAL_PURPOSE:
        await db.execute(
            "UPDATE outbox SET text = ? " + _THIS_ROW, (DELIVERED_CREDENTIAL, row.id, row.txn_id)
        )
    await db.execute(
        "INSERT INTO chat_messages (transport, room, message_id, card_id, question_id, "
        "request_id, purpose, created_at, talk_id, diff_view_id, attachment_id, proposal_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (
            row.transport,
            row.room,
            message_id,
            row.card_id,
            row.question_id,
            row.request_id,
            row.purpose,
            time.time(),
            row.talk_id,
            row.diff_view_id,
            row.attachment_id,
            row.proposal_id,
        ),
    )


async def mark_send_started(store: Store, row: OutboxRow) -> None:
    await store.write_one(
        "UPDATE outbox SET send_started_at = ? " + _THIS_ROW, (time.time(), row.id, row.txn_id)
    )


async def mark_attempt_failed(db: Db, row: OutboxRow, error: str) -> None:
    await db.execute(
        "UPDATE outbox SET attempts = attempts + 1, last_error = ? " + _THIS_ROW,
        (error[:500], row.id, row.txn_id),
    )


async def note_waiting(db: Db, row: OutboxRow, error: str) -> None:
    """Why a row waits (its room takes nothing now); not a try of the row itself."""
    await db.execute(
        "UPDATE outbox SET last_error = ? " + _THIS_ROW, (error[:500], row.id, row.txn_id)
    )


async def mark_failed(db: Db, row: OutboxRow, error: str) -> None:
    """Given up: the row stays, with its reason, for `chatbot check` and the log."""
    await db.execute(
        "UPDATE outbox SET state = 'failed', attempts = attempts + 1, last_error = ? " + _THIS_ROW,
        (error[:500], row.id, row.txn_id),
    )


async def posted(db: Db, transport: str, message_id: str) -> Posted | None:
    row = await db.fetchone(
        "SELECT transport, room, message_id, card_id, question_id, request_id, purpose, talk_id, "
        "diff_view_id, attachment_id, proposal_id FROM chat_messages "
        "WHERE transport = ? AND message_id = ? ORDER BY id DESC LIMIT 1",
        (transport, message_id),
    )
    return Posted(**dict(row)) if row else None


async def remember(db: Db, transport: str, room: str, message_id: str, **links: object) -> None:
    """Remember a message that did not go through the outbox (e.g. sent directly)."""
    await db.execute(
        "INSERT INTO chat_messages (transport, room, message_id, card_id, question_id, "
        "request_id, purpose, created_at, talk_id, diff_view_id, attachment_id, proposal_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (
            transport,
            room,
            message_id,
            links.get("card_id"),
            links.get("question_id"),
            links.get("request_id"),
            links.get("purpose", "notice"),
            time.time(),
            links.get("talk_id"),
            links.get("diff_view_id"),
            links.get("attachment_id"),
            links.get("proposal_id"),
        ),
    )


async def waiting(db: Db) -> list[tuple[str, str, int, str | None]]:
    """Per (transport, room): how many rows wait, and the last error, for `chatbot check`."""
    rows = await db.fetchall(
        "SELECT transport, room, count(*), max(last_error) FROM outbox "
        "WHERE state = 'pending' GROUP BY transport, room ORDER BY transport, room"
    )
    return [(r[0], r[1], r[2], r[3]) for r in rows]


async def failed(db: Db, since: float) -> list[tuple[str, str, int, str | None]]:
    """Per (transport, room): rows given up since `since`, and the last reason."""
    rows = await db.fetchall(
        "SELECT transport, room, count(*), max(last_error) FROM outbox "
        "WHERE state = 'failed' AND created_at >= ? GROUP BY transport, room "
        "ORDER BY transport, room",
        (since,),
    )
    return [(r[0], r[1], r[2], r[3]) for r in rows]


@dataclass(frozen=True)
class Request:
    id: int
    requester: str
    transport: str
    command: str
    argument: str
    state: str
    decided_by: str | None
    created_at: float
    decided_at: float | None


async def add_request(
    db: Db, requester: str, transport: str, command: str, argument: str
) -> Request:
    request_id = await db.insert(
        "INSERT INTO requests (requester, transport, command, argument, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (requester, transport, command, argument, time.time()),
    )
    found = await get_request(db, request_id)
    assert found is not None
    return found


async def get_request(db: Db, request_id: int) -> Request | None:
    row = await db.fetchone("SELECT * FROM requests WHERE id = ?", (request_id,))
    return Request(**dict(row)) if row else None


async def pending_requests(db: Db) -> list[Request]:
    rows = await db.fetchall("SELECT * FROM requests WHERE state = 'pending' ORDER BY id")
    return [Request(**dict(row)) for row in rows]


@dataclass(frozen=True)
class RequestMessage:
    """Where a request was announced: its chat and, once sent, the message's id."""

    transport: str
    room: str
    target_kind: str
    message_id: str | None


async def request_message(db: Db, request_id: int) -> RequestMessage | None:
    row = await db.fetchone(
        "SELECT transport, room, target_kind, message_id FROM outbox "
        "WHERE request_id = ? AND purpose = 'request' ORDER BY id LIMIT 1",
        (request_id,),
    )
    return RequestMessage(**dict(row)) if row else None


async def decide_request(db: Db, request_id: int, accepted: bool, owner: str) -> Request | None:
    """Accept or decline a pending request; None when it was decided before (first wins)."""
    changed = await db.execute(
        "UPDATE requests SET state = ?, decided_by = ?, decided_at = ? "
        "WHERE id = ? AND state = 'pending'",
        ("accepted" if accepted else "declined", owner, time.time(), request_id),
    )
    return await get_request(db, request_id) if changed == 1 else None
