"""What the daily digest tells: the board's moves, waits, spend and failures in a span.

`facts` gathers them as plain records (the notifier words them); `send_once` claims
the day's digest and writes its posts in one transaction, so of several processes on
one database exactly one sends it, and a crash between the two sends nothing twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chatbot.board.budget import budget_stopped
from chatbot.board.inbox import InboxItem, inbox
from chatbot.domain import ways
from chatbot.domain.budgets import BudgetState
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import RUN_FAILURE, Action
from chatbot.domain.why import commands_for
from chatbot.store import Db, spend
from chatbot.store import cards as card_store
from chatbot.store import digests as store
from chatbot.store.digests import Last
from chatbot.store.spend import Spend

if TYPE_CHECKING:
    from chatbot.board.moves import BoardService

__all__ = ["Facts", "Failure", "Last", "facts", "last", "send_once"]

# A card that got here moved to where its owner wanted it.
FINISHED = frozenset({Phase.READY_FOR_DEPLOYMENT, Phase.DEPLOYED, Phase.DONE, Phase.RESEARCH_DONE})
STARTED = frozenset({Action.START.value, Action.CHILD_STARTED.value, Action.RESEARCH.value})
FAILED = frozenset(failure.action.value for failure in RUN_FAILURE.values())
_STAGE = {failure.action.value: failure.stage.value for failure in RUN_FAILURE.values()}


@dataclass(frozen=True)
class Failure:
    slug: str
    stage: str
    detail: str
    at: float
    #: Where the card is now, and the commands that move it on from its failure
    #: (none: it moved on since).
    phase: Phase
    ways: tuple[str, ...] = ()


@dataclass(frozen=True)
class Facts:
    since: float
    until: float
    moves: int = 0
    cards: int = 0
    #: Cards that reached a finishing phase (the last one each reached), in order.
    finished: tuple[tuple[str, Phase], ...] = ()
    started: tuple[str, ...] = ()
    failures: tuple[Failure, ...] = ()
    #: The inbox now, oldest first.
    waiting: tuple[InboxItem, ...] = ()
    spend: Spend = field(default_factory=lambda: Spend("digest", 0.0, 0))
    #: Today's budget, when a day budget is configured.
    day: BudgetState | None = None

    @property
    def quiet(self) -> bool:
        return not (self.moves or self.waiting or self.spend.runs or self.failures)


async def last(board: BoardService) -> Last:
    return await store.last(board.store.reader)


async def facts(board: BoardService, since: float, until: float) -> Facts:
    db = board.store.reader
    moves = await store.moves(db, since, until)
    finished: dict[str, Phase] = {}
    started: dict[str, None] = {}
    failed: dict[str, store.Move] = {}
    for move in moves:
        if move.to_phase in FINISHED:
            finished.pop(move.slug, None)  # listed where it finished last
            finished[move.slug] = Phase(move.to_phase)
        if move.action in STARTED:
            started.setdefault(move.slug)
        if move.action in FAILED:
            failed.pop(move.slug, None)
            failed[move.slug] = move
    return Facts(
        since=since,
        until=until,
        moves=len(moves),
        cards=len({move.slug for move in moves}),
        finished=tuple(finished.items()),
        started=tuple(started),
        failures=tuple([await _failure(db, move) for move in failed.values()]),
        waiting=tuple(await inbox(board)),
        spend=await spend.between(db, "digest", since, until),
        day=await board.budget.day(until),
    )


async def _failure(db: Db, move: store.Move) -> Failure:
    card = await card_store.get(db, move.slug)
    phase = card.phase if card is not None else Phase(move.to_phase)
    found: tuple[str, ...] = ()
    # Its failure holds the card only while it stays where the failure left it.
    if card is not None and card.phase.value == move.to_phase:
        stopped = budget_stopped(card) is not None
        actions = ways.ways_forward(card.phase, card.failure_stage, budget_stopped=stopped)
        found = tuple(way.replace("{slug}", card.slug) for way in commands_for(actions))
    stage = _STAGE.get(move.action, move.action)
    return Failure(move.slug, stage, move.reason, move.at, phase, found)


async def send_once(
    board: BoardService, day: str, at: float, write: Callable[[Db], Awaitable[int]]
) -> int | None:
    """Claim `day`'s digest at `at` and `write` its posts, together: the posts written,
    or None when it was sent already (by this process before a restart, or another)."""
    async with board.store.transaction() as db:
        if not await store.claim(db, day, at):
            return None
        return await write(db)
