"""Answers as outbox rows: addressed to where the event came from, refusals explained.

Every answer is a `Post` to the chat the event came from (the room, or the person
for a direct chat), as a reply to the event's message. Nothing here calls a
transport: the outbox sends the rows. An answer that reports a board change is
written in the change's own transaction (`BoardTx.post`); one that reports none
goes out alone (`BoardService.post_alone`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from chatbot.board import (
    ActiveJobExists,
    AlreadyAnswered,
    Attachment,
    BoardError,
    Post,
    QuestionRow,
    Request,
    StoreUnwritable,
    UnknownCard,
    closest_slugs,
)
from chatbot.board.ports import ChatSide
from chatbot.chat import render
from chatbot.chat.authority import Standing
from chatbot.chat.commands import FOR_ACTION, PREFIX, shown_with
from chatbot.chat.texts import say
from chatbot.domain.transitions import TransitionRefused
from chatbot.notify.format import html_for
from chatbot.transports.base import Identity, IncomingEvent, IncomingMessage


@dataclass(frozen=True)
class Origin:
    """An allowed act's event and its sender, as authority saw them."""

    event: IncomingEvent
    identity: Identity
    role: Standing
    #: The files sent with the event, fetched and kept (chat/files_in.py).
    files: tuple[Attachment, ...] = ()

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
    return event.envelope.message_id if isinstance(event, IncomingMessage) else event.target_id


def chat_of(event: IncomingEvent) -> dict[str, str]:
    """Where an event came from, in the board's `origin` form (what start_draft keeps)."""
    chat = event.envelope.chat
    return {
        "transport": event.envelope.transport,
        "target_kind": "person" if isinstance(chat, Identity) else "room",
        "target": chat.id,
    }


class Replies:
    def __init__(
        self,
        board: ChatSide,
        locale: str,
        max_chars: int = render.MAX_CHARS,
        *,
        prefix: str = PREFIX,
    ):
        self.board = board
        self.locale = locale
        self.max_chars = max_chars
        #: Commands in what the bot says are shown with this (the first configured) prefix.
        self.prefix = prefix
        #: Sends a post at once, past the outbox (wired by the service; None in tests
        #: of the chat alone): for answers while the database takes no writes.
        self.direct: Callable[[Post], Awaitable[None]] | None = None

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
        diff_view_id: int | None = None,
        html: str | None = None,
        attachment_id: int | None = None,
    ) -> Post:
        """`html`: the body's own markup (a /diff file's coloured lines), used where the
        network shows HTML, instead of the one made from the text."""
        chat = chat_of(event)
        body = render.clip(shown_with(text, self.prefix), self.locale, self.max_chars)
        formatted = html_for(chat["transport"], body)
        return Post(
            transport=chat["transport"],
            target=chat["target"],
            target_kind=chat["target_kind"],
            text=body,
            html=html if html is not None and formatted is not None else formatted,
            diff_view_id=diff_view_id,
            attachment_id=attachment_id,
            reply_to=reply_target(event),
            card_id=card_id,
            question_id=question_id,
            request_id=request_id,
            purpose=purpose,
        )

    async def send(self, event: IncomingEvent, text: str, **links: Any) -> None:
        post = self.post(event, text, **links)
        try:
            await self.board.post_alone(post)
        except StoreUnwritable:
            # The outbox is a table: while the database takes no writes, an answer
            # goes to its chat directly (once, unrecorded), if the service wired a way.
            if self.direct is None:
                raise
            await self.direct(post)

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

    # --- refusals -----------------------------------------------------------------

    async def explain(self, event: IncomingEvent, slug: str, error: Exception) -> None:
        """A refused action, said in the chat's language; unknown errors propagate."""
        if isinstance(error, UnknownCard):
            await self.unknown_card(event, error.slug or slug)
        elif isinstance(error, TransitionRefused):
            await self.send(event, self.refused_text(error), purpose="refusal")
        elif isinstance(error, AlreadyAnswered):
            text = self.already_answered_text(error.question, slug)
            await self.send(event, text, purpose="refusal")
        elif isinstance(error, Decided):
            await self.send(event, self.decided_text(error.request), purpose="refusal")
        elif isinstance(error, ActiveJobExists):
            await self.say(event, "job_exists", slug=slug, purpose="refusal")
        elif isinstance(error, BoardError):
            await self.say(event, "board_refused", detail=str(error), purpose="refusal")
        else:
            raise error

    def refused_text(self, refused: TransitionRefused) -> str:
        command = FOR_ACTION.get(refused.action)
        return self.text(
            "refused",
            slug=refused.slug,
            phase=refused.phase.label(self.locale),
            command=f"/{command.name}" if command else refused.action.value,
            allowed=render.allowed_commands(refused.allowed, self.locale),
        )

    async def unknown_card(self, event: IncomingEvent, slug: str) -> None:
        close = closest_slugs(slug, await self.board.reads.slugs())
        if close:
            await self.say(event, "unknown_card_hint", slug=slug, choices=", ".join(close))
        else:
            await self.say(event, "unknown_card", slug=slug)

    def decided_text(self, request: Request) -> str:
        return self.text(
            "request_decided",
            id=request.id,
            state=self.text(f"request_state_{request.state}"),
            by=request.decided_by or "-",
        )

    def already_answered_text(self, question: QuestionRow, slug: str) -> str:
        # People never see question numbers; the card and the question's words they know.
        asked = render.short(question.text)
        if question.state == "cancelled":
            return self.text("question_closed", slug=slug, text=asked)
        return self.text("already_answered", slug=slug, text=asked, by=question.answered_by or "-")
