"""A real store and board in tmp_path, a ChatIntake on them, and event builders.

No worker runs: tests assert on card phases, queued jobs, answered questions and
the outbox rows the chat layer wrote.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chatbot.board import BoardService
from chatbot.chat.intake import ChatIntake
from chatbot.domain.phases import Kind, Phase
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import questions as question_store
from chatbot.store.chat import OutboxRow
from chatbot.store.jobs import Job, listing
from chatbot.store.questions import QuestionRow
from chatbot.transports.base import (
    Envelope,
    Identity,
    IncomingEdit,
    IncomingMessage,
    IncomingReaction,
    Room,
    Target,
)

OWNER = Identity("xmpp", "owner@example.org")
MATRIX_OWNER = Identity("matrix", "@owner:example.org")
REQUESTER = Identity("xmpp", "req@example.org")
STRANGER = Identity("xmpp", "eve@example.org")
ROOM = Room("xmpp", "board@conference.example.org")
OTHER_ROOM = Room("xmpp", "other@conference.example.org")

_ids = itertools.count(1)


def msg(
    text: str,
    sender: Identity | None = OWNER,
    *,
    chat: Target = ROOM,
    reply_to: str | None = None,
    direct: bool | None = None,
    mid: str | None = None,
) -> IncomingMessage:
    is_direct = isinstance(chat, Identity) if direct is None else direct
    return IncomingMessage(
        envelope=Envelope(
            chat=chat,
            sender=sender,
            message_id=mid or f"in-{next(_ids)}",
            is_direct=is_direct,
            sender_name="nick",
        ),
        text=text,
        reply_to=reply_to,
    )


def dm(text: str, sender: Identity = OWNER, **kw: Any) -> IncomingMessage:
    return msg(text, sender, chat=sender, **kw)


def react(
    target_id: str, key: str, sender: Identity | None = OWNER, *, chat: Target = ROOM
) -> IncomingReaction:
    return IncomingReaction(
        envelope=Envelope(
            chat=chat,
            sender=sender,
            message_id=f"r-{next(_ids)}",
            is_direct=isinstance(chat, Identity),
        ),
        target_id=target_id,
        added=frozenset({key}),
    )


def edit(target_id: str, text: str, sender: Identity = OWNER) -> IncomingEdit:
    return IncomingEdit(
        envelope=Envelope(chat=ROOM, sender=sender, message_id=f"e-{next(_ids)}"),
        target_id=target_id,
        text=text,
    )


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Env:
    store: Store
    board: BoardService
    chat: ChatIntake
    clock: Clock
    seen: int = field(default=0)

    async def card(self, slug: str, phase: Phase = Phase.PLANNED, **fields: Any) -> Any:
        kind = fields.pop("kind", Kind.INTENT)
        async with self.store.transaction() as db:
            return await card_store.create(
                db, slug, kind, phase, actor="test", title=f"Title of {slug}", **fields
            )

    async def phase(self, slug: str) -> Phase:
        return (await self.board.reads.card(slug)).phase

    async def jobs(self) -> list[Job]:
        return await listing(self.store.reader)

    async def ask(
        self,
        slug: str,
        text: str = "Which way?",
        options: list[str] | None = None,
        *,
        message_id: str | None = None,
        room: Target = ROOM,
    ) -> QuestionRow:
        """Open a question and remember it as posted (what the notifier would do)."""
        card = await self.board.reads.card(slug)
        async with self.store.transaction() as db:
            question = await question_store.ask(db, card.id, "operator", text, options or [])
            if message_id:
                await chat_store.remember(
                    db,
                    room.transport,
                    room.id,
                    message_id,
                    card_id=card.id,
                    question_id=question.id,
                    purpose="question",
                )
        return question

    async def posted(self, message_id: str, room: Target = ROOM, **links: Any) -> None:
        """Remember a bot message (e.g. a card notice) as posted."""
        async with self.store.transaction() as db:
            await chat_store.remember(db, room.transport, room.id, message_id, **links)

    async def outbox(self) -> list[OutboxRow]:
        rows = await self.store.reader.fetchall("SELECT * FROM outbox ORDER BY id")
        return [OutboxRow.from_row(r) for r in rows]

    async def new(self) -> list[OutboxRow]:
        """Outbox rows written since the last call."""
        rows = await self.outbox()
        fresh, self.seen = rows[self.seen :], len(rows)
        return fresh

    async def said(self, event: Any) -> list[OutboxRow]:
        """Handle one event; the outbox rows it wrote."""
        await self.new()
        await self.chat.handle(event)
        return await self.new()

    async def one(self, event: Any) -> OutboxRow:
        rows = await self.said(event)
        assert len(rows) == 1, [r.text for r in rows]
        return rows[0]

    async def sent(self, row: OutboxRow, message_id: str) -> None:
        """Pretend the outbox sender delivered `row` as `message_id`."""
        async with self.store.transaction() as db:
            await chat_store.mark_sent(db, row, message_id)


@pytest.fixture
async def store(tmp_path: Path):
    opened = await Store.open(tmp_path / "board.sqlite3")
    yield opened
    await opened.close()


def make_env(store: Store, tmp_path: Path, locale: str = "en", **options: Any) -> Env:
    repo = tmp_path / "repo"
    (repo / "docs" / "intent").mkdir(parents=True, exist_ok=True)
    board = BoardService(store, repo)
    clock = Clock()
    chat = ChatIntake(
        board,
        owners=["owner@example.org", "@owner:example.org"],
        requesters=["req@example.org"],
        locale=locale,
        clock=clock,
        **options,
    )
    return Env(store, board, chat, clock)


@pytest.fixture
def env(store: Store, tmp_path: Path) -> Env:
    return make_env(store, tmp_path)
