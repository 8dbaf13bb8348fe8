"""What each consumer may ask of the board: one protocol per consumer, with only that.

BoardService (moves.py) holds the board's facets (`board.reads`, `board.web`,
`board.talk`, ...) and is handed to chat, the worker and the web; each of them types
its parameter by its port here, so a checker holds what it may call. The web's port
reads only: its facets are the read halves of the board's (an owner's act on the web
page goes through chat, chat/web_acts.py).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, Unpack

from chatbot.board.agent_asks import AgentAsks
from chatbot.board.attachments import BoardFiles
from chatbot.board.budget import BoardBudget, SpendReport
from chatbot.board.change import Applied
from chatbot.board.comments import BoardComments
from chatbot.board.failures import RunFailures
from chatbot.board.moves import Along
from chatbot.board.queue import BoardQueue
from chatbot.board.reads import BoardReads
from chatbot.board.routines import BoardRoutines, RoutineRow
from chatbot.board.talk import BoardTalk
from chatbot.board.tx import BoardTx
from chatbot.board.web_reads import WebReads
from chatbot.board.web_sessions import WebSessions
from chatbot.domain.budgets import BudgetState
from chatbot.domain.transitions import Action
from chatbot.store import Store
from chatbot.store.cards import Card
from chatbot.store.chat import Post
from chatbot.store.comments import LineComment
from chatbot.store.jobs import Job
from chatbot.store.questions import QuestionRow
from chatbot.store.routines import RunRow


class CommentReads(Protocol):
    """A card's line comments, as its page shows them (board/comments.py)."""

    async def of_card(self, card: Card) -> list[LineComment]: ...


class RoutineReads(Protocol):
    """The routines and their runs, as the routines page shows them (board/routines.py)."""

    async def listed(self) -> list[RoutineRow]: ...

    async def runs(self, routine_id: int, limit: int = 10) -> list[RunRow]: ...

    async def owner_zones(self) -> dict[str, str]: ...


class BudgetReads(Protocol):
    """What was spent against the budgets (board/budget.py)."""

    async def day(self, now: float | None = None) -> BudgetState | None: ...

    async def spend_report(self, days: int = 7, cards: int = 8) -> SpendReport: ...


class InboxSource(Protocol):
    """What the inbox and a card's why read (board/inbox.py): chat's and the web's."""

    @property
    def store(self) -> Store: ...

    @property
    def deploy_configured(self) -> bool: ...

    @property
    def reads(self) -> BoardReads: ...

    @property
    def budget(self) -> BudgetReads: ...


class WebSide(InboxSource, Protocol):
    """What the web board reads (chatbot/web/server.py): the board's reads, the web's
    own, and the read halves of comments, routines and budgets."""

    @property
    def web(self) -> WebReads: ...

    @property
    def comments(self) -> CommentReads: ...

    @property
    def routines(self) -> RoutineReads: ...


class ChatSide(InboxSource, Protocol):
    """What chat may do (chatbot/chat): an owner's moves with their answer, chat's own
    records, and the facets people act through."""

    @property
    def default_lane(self) -> str: ...

    @property
    def talk(self) -> BoardTalk: ...

    @property
    def comments(self) -> BoardComments: ...

    @property
    def files(self) -> BoardFiles: ...

    @property
    def routines(self) -> BoardRoutines: ...

    @property
    def asks(self) -> AgentAsks: ...

    @property
    def web_sessions(self) -> WebSessions: ...

    @property
    def budget(self) -> BoardBudget: ...

    async def act(
        self,
        slug: str,
        action: Action,
        *,
        actor: str,
        reason: str = "",
        payload: dict[str, Any] | None = None,
        along: Along | None = None,
        **changes: Any,
    ) -> Card: ...

    async def answer(
        self,
        slug: str,
        text: str,
        *,
        actor: str,
        question_id: int | None = None,
        along: Along | None = None,
    ) -> tuple[Card, QuestionRow | None]: ...

    async def start_draft(
        self,
        text: str,
        *,
        actor: str,
        origin: dict[str, str] | None = None,
        along: Along | None = None,
    ) -> Card: ...

    def transaction(self) -> AbstractAsyncContextManager[BoardTx]: ...

    async def post_alone(self, post: Post) -> None: ...


class WorkerSide(Protocol):
    """What the worker may do (chatbot/pipeline): claim and run jobs, apply a validated
    result, fail a run, talk with its agent, and read what a run needs."""

    @property
    def default_lane(self) -> str: ...

    @property
    def reads(self) -> BoardReads: ...

    @property
    def queue(self) -> BoardQueue: ...

    @property
    def failures(self) -> RunFailures: ...

    @property
    def talk(self) -> BoardTalk: ...

    @property
    def asks(self) -> AgentAsks: ...

    @property
    def comments(self) -> BoardComments: ...

    @property
    def files(self) -> BoardFiles: ...

    @property
    def budget(self) -> BoardBudget: ...

    async def apply(
        self,
        slug: str,
        action: Action,
        /,
        *,
        job: Job | None = None,
        worker: str | None = None,
        accepted_run: tuple[int, str | None] | None = None,
        **applied: Unpack[Applied],
    ) -> Card: ...
