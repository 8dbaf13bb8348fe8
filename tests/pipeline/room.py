"""A chat room on a pipeline harness: the real notifier and ChatIntake on its board.

What the bot says on its own (notices, questions) and what it answers to commands
lands in the outbox as it would in a real room; a test reads it from there and
sends commands as the owner would.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from chatbot.chat.intake import ChatIntake
from chatbot.notify.notifier import Destination, Notifier
from chatbot.store import chat as chat_store
from chatbot.store.chat import OutboxRow
from chatbot.transports.base import Envelope, Identity, IncomingMessage, IncomingReaction, Room
from tests.pipeline.harness import Harness

OWNER = Identity("xmpp", "owner@example.org")
ROOM = Room("xmpp", "board@conference.example.org")
_ids = itertools.count(1)


@dataclass
class ChatRoom:
    h: Harness
    chat: ChatIntake
    seen: int = field(default=0)

    async def rows(self) -> list[OutboxRow]:
        found = await self.h.store.reader.fetchall("SELECT * FROM outbox ORDER BY id")
        return [OutboxRow.from_row(r) for r in found]

    async def new(self) -> list[str]:
        """What the room was told since the last look."""
        rows = await self.rows()
        fresh, self.seen = rows[self.seen :], len(rows)
        return [row.text for row in fresh]

    async def say(self, text: str) -> str:
        """The owner says `text`; the bot's answer(s), joined."""
        await self.new()
        await self.chat.handle(
            IncomingMessage(
                envelope=Envelope(
                    chat=ROOM,
                    sender=OWNER,
                    message_id=f"in-{next(_ids)}",
                    is_direct=False,
                    sender_name="owner",
                ),
                text=text,
                reply_to=None,
            )
        )
        return "\n".join(await self.new())

    async def react(self, row: OutboxRow, key: str) -> str:
        """The owner reacts to one of the bot's posts (delivered as `row`)."""
        message_id = f"out-{row.id}"
        async with self.h.store.transaction() as db:
            await chat_store.mark_sent(db, row, message_id)
        await self.new()
        await self.chat.handle(
            IncomingReaction(
                envelope=Envelope(
                    chat=ROOM, sender=OWNER, message_id=f"r-{next(_ids)}", is_direct=False
                ),
                target_id=message_id,
                added=frozenset({key}),
            )
        )
        return "\n".join(await self.new())


def open_room(h: Harness, locale: str = "en") -> ChatRoom:
    """The notifier posts the board's moves and runs into one room; the owner talks there."""
    notifier = Notifier(h.store, [Destination(ROOM.transport, ROOM.id)], locale)
    h.board.listeners.append(notifier)
    h.worker.observers.append(notifier)
    chat = ChatIntake(h.board, owners=[OWNER], locale=locale)
    return ChatRoom(h, chat)
