"""What each consumer may ask of the board: one protocol per consumer, with only that.

BoardService (moves.py) holds the board's facets (`board.reads`, `board.web`,
`board.talk`, ...) and is handed to chat, the worker and the web; each of them types
its parameter by its port here, so a checker holds what it may call. The web's port
reads only: its facets are the read halves of the board's (an owner's act on the web
page goes through chat, chat/web_acts.py).
"""

from __future__ import annotations

from typing import Protocol

from chatbot.board.budget import SpendReport
from chatbot.board.reads import BoardReads
from chatbot.board.routines import RoutineRow
from chatbot.board.web_reads import WebReads
from chatbot.domain.budgets import BudgetState
from chatbot.store import Store
from chatbot.store.cards import Card
from chatbot.store.comments import LineComment
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
