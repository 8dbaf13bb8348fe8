"""Answers as outbox rows, written in the transaction of the change they report.

Every answer is a `Post` addressed to the chat the event came from (the room, or
the person for a direct chat), as a reply to the event's message. Nothing here
calls a transport: the outbox sender delivers the rows.

Where an answer reports a board change, it is written in the change's own
transaction: the board calls it (`along=`) right after the move, so the card's
move, its job and the reply commit together, or not at all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from chatbot.board import Change
from chatbot.chat import render
from chatbot.chat.authority import Role
from chatbot.chat.texts import say
from chatbot.notify.notifier import as_html
from chatbot.store import Db, Store
from chatbot.store import chat as chat_store
from chatbot.store.chat import Post, Request
from chatbot.transports.base import Identity, IncomingEvent, IncomingMessage

Work = Callable[[Db, Change], Awaitable[None]]


@dataclass(frozen=True)
class Origin:
    """An allowed act's event and its sender, as authority saw them."""

    event: IncomingEvent
    identity: Identity
    role: Role

    @property
    def actor(self) -> str:
        # The event log names people by transport and bare id, never by nick.
        return str(self.identity)


class Decided(Exception):
    """A request was decided by someone else first; the whole action is undone."""

    def __init__(self, request: Request):
        super().__init__(f"request {request.id} was {request.state} already")
        self.request = request


def reply_target(event: IncomingEvent) -> str:
    # A reaction or an edit is answered as a reply to the message it points at.
    return event.message_id if isinstance(event, IncomingMessage) else event.target_id


def chat_of(event: IncomingEvent) -> dict[str, str]:
    """Where an event came from, in the board's `origin` form (what start_draft keeps)."""
    chat = event.chat
    return {
        "transport": event.transport,
        "target_kind": "person" if isinstance(chat, Identity) else "room",
        "target": chat.id,
    }


class Replies:
    """Writing answers; the base of the handlers."""

    def __init__(self, store: Store, locale: str, max_chars: int = render.MAX_CHARS):
        self.store = store
        self.locale = locale
        self.max_chars = max_chars

    def text(self, key: str, **params: Any) -> str:
        return say(self.locale, key, **params)

    def post(
        self,
        event: IncomingEvent,
        text: str,
        *,
        purpose: str = "reply",
        card_id: int | None = None,
        request_id: int | None = None,
        question_id: int | None = None,
    ) -> Post:
        chat = chat_of(event)
        body = render.clip(text, self.locale, self.max_chars)
        return Post(
            transport=chat["transport"],
            target=chat["target"],
            target_kind=chat["target_kind"],
            text=body,
            # Matrix clients show the formatted body; XMPP gets plain text.
            html=as_html(body) if chat["transport"] == "matrix" else None,
            reply_to=reply_target(event),
            card_id=card_id,
            question_id=question_id,
            request_id=request_id,
            purpose=purpose,
        )

    async def send(self, event: IncomingEvent, text: str, **links: Any) -> None:
        await chat_store.enqueue_alone(self.store, self.post(event, text, **links))

    async def say(
        self,
        event: IncomingEvent,
        key: str,
        *,
        purpose: str = "reply",
        card_id: int | None = None,
        **params: Any,
    ) -> None:
        await self.send(event, self.text(key, **params), purpose=purpose, card_id=card_id)

    async def changing(self, work: Work, change: Callable[[Work], Awaitable[Any]]) -> Any:
        """Make a board change with `work` in its transaction (the board's `along`)."""
        return await change(work)
