"""What chat may do inside a board transaction: post an answer, record a request.

Chat writes its answer in the transaction of the change it reports (the board
calls it back with `along=`), so the card's move, its job and the reply commit
together or not at all. This handle is all chat gets of that transaction: it never
sees the store itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from chatbot.board.attachments import Attachment, AttachPurpose, attach_in
from chatbot.board.errors import BoardError  # noqa: F401 - its home before errors.py
from chatbot.store import Db
from chatbot.store import attachments as attachment_store
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import jobs as job_store
from chatbot.store.chat import Post, Request, RequestMessage
from chatbot.store.jobs import Job

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "BoardError",
]

# The transport of an answer to an action taken on the web board's page: the page
# shows it (chat/web_acts.py), no chat is sent it as a reply, so it is never queued.
ON_PAGE = "web-page"
# The same for an owner's own assistant acting over MCP (`chatbot mcp --as`): the tool's
# result shows the answer; the card's rooms are told as for the page.
ON_MCP = "mcp"
SHOWN_BY_CALLER = frozenset({ON_PAGE, ON_MCP})
# What is done from the page is said in the card's rooms too, in the same transaction:
# the notifier's `said_on_web` (wired by the app) gets such an answer and its rooms.
PageEcho = Callable[[Db, Post], Awaitable[None]]


class BoardTx:
    def __init__(self, db: Db, echo: PageEcho | None = None):
        self._db = db
        self._echo = echo

    async def post(self, post: Post) -> None:
        """Queue a chat message; the outbox sends it once this transaction commits.

        An answer for the web board's page (or an MCP client) is not queued itself: the
        card's rooms are told what was done (`echo`), so a move undone by a refusal says
        nothing there."""
        if post.transport in SHOWN_BY_CALLER:
            if self._echo is not None:
                await self._echo(self._db, post)
            return
        await chat_store.enqueue(self._db, post)

    async def attach_files(
        self,
        ids: Sequence[int],
        card_id: int,
        *,
        purpose: AttachPurpose,
        actor: str,
        question_id: int | None = None,
    ) -> list[Attachment]:
        """Files sent with what this transaction does (a draft, an answer) for its card."""
        rows = await attach_in(
            self._db, ids, card_id, purpose=purpose, actor=actor, question_id=question_id
        )
        return [Attachment.from_row(row) for row in rows]

    async def files_for_request(self, ids: Sequence[int], request_id: int) -> None:
        """A requester's files wait with their request."""
        await attachment_store.wait_with(self._db, ids, request_id)

    async def request_files_to_card(self, request_id: int, card_id: int) -> list[Attachment]:
        """An accepted request's files go to its card, as the requester's."""
        waiting = await attachment_store.of_request(self._db, request_id)
        if not waiting:
            return []
        rows = await attach_in(
            self._db,
            [row.id for row in waiting],
            card_id,
            purpose=AttachPurpose.CARD,
            actor=waiting[0].actor,
        )
        return [Attachment.from_row(row) for row in rows]

    async def active_job(self, card_id: int) -> Job | None:
        return await job_store.active_for_card(self._db, card_id)

    async def add_request(
        self, requester: str, transport: str, command: str, argument: str
    ) -> Request:
        return await chat_store.add_request(self._db, requester, transport, command, argument)

    async def decide_request(self, request_id: int, accepted: bool, owner: str) -> Request | None:
        """Accept or decline; None when someone decided first (the first decision wins)."""
        return await chat_store.decide_request(self._db, request_id, accepted, owner)

    async def request(self, request_id: int) -> Request | None:
        return await chat_store.get_request(self._db, request_id)

    async def request_message(self, request_id: int) -> RequestMessage | None:
        return await chat_store.request_message(self._db, request_id)

    async def settle_recommendation(
        self, slug: str, actor: str, outcome: Literal["applied", "dismissed"]
    ) -> None:
        """The inspector's routing recommendation was applied or dismissed: not pending."""
        card = await card_store.require(self._db, slug)
        if card.data.inspection is None:
            return
        settled = card.data.inspection.copy()
        settled["pending"] = False
        if outcome == "applied":
            settled["applied_by"] = actor
        else:
            settled["dismissed_by"] = actor
        await card_store.update(self._db, slug, data=card.data.updated(inspection=settled))
