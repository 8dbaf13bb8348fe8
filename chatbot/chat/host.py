"""What a family of commands may ask of the `ChatHandlers` it is part of, written once.

ChatHandlers (handlers.py) holds one facet per family of commands (lookups, talking,
requests, ...), each a `Facet` made with its host. A facet reaches the board and the
replies through its host, and some acts reach across: a request an owner accepts becomes
the move (`act`), the draft or the comment it asked for; a steer and a request take the
sender's loose files. `HandlerHost` declares exactly those, so the checker holds every
facet to one declaration and ChatHandlers to implementing each of them; a facet sees
nothing else of the others.
"""

from __future__ import annotations

from typing import Any, Protocol

from chatbot.board import Along, Attachment
from chatbot.board.ports import ChatSide
from chatbot.chat.commands import CommandCall
from chatbot.chat.replies import Origin, Replies
from chatbot.config import Config
from chatbot.domain.transitions import Action


class HandlerHost(Protocol):
    """What a facet may ask of its host."""

    board: ChatSide
    replies: Replies
    locale: str
    #: For what only the configuration knows (where a session can be continued, the
    #: web board's address, routines' prefixes); None in tests that need none of it.
    config: Config | None

    async def act(
        self,
        origin: Origin,
        slug: str,
        action: Action,
        *,
        payload: dict[str, Any] | None = None,
        reason: str = "",
        also: Along | None = None,
        prefix: str = "",
    ) -> None:
        """An owner action on a card, answered in the move's own transaction (handlers.py)."""
        ...

    async def draft(
        self,
        origin: Origin,
        invocation: CommandCall,
        *,
        also: Along | None = None,
        prefix: str = "",
        chat: dict[str, str] | None = None,
    ) -> None:
        """A new card the planner drafts with its owner (handlers.py)."""
        ...

    async def comment(self, origin: Origin, invocation: CommandCall) -> None:
        """A line comment on a card's diff (commenting.py)."""
        ...

    async def request(self, origin: Origin, invocation: CommandCall) -> None:
        """A requester's ask, posted for an owner (requesting.py)."""
        ...

    async def files_of(self, origin: Origin) -> tuple[Attachment, ...]:
        """The sender's loose files, which a steer or request takes along (attaching.py)."""
        ...

    def files_said(self, files: tuple[Attachment, ...]) -> str:
        """Files in words, for an answer (attaching.py)."""
        ...

    @property
    def loose_minutes(self) -> int:
        """How long a loose file waits for its card (attaching.py)."""
        ...


class Facet:
    """One family of commands, made by its host; the host's state is read through it,
    never copied, so a test that swaps the host's configuration reaches every facet."""

    def __init__(self, host: HandlerHost) -> None:
        self.host = host

    @property
    def board(self) -> ChatSide:
        return self.host.board

    @property
    def replies(self) -> Replies:
        return self.host.replies

    @property
    def locale(self) -> str:
        return self.host.locale

    @property
    def config(self) -> Config | None:
        return self.host.config
