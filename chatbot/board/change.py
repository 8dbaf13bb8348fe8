"""What a move of the board is: what a run's result asks of it (`Applied`) and what its
listeners hear of it (`Change`). Records only; `moves.BoardService` applies them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chatbot.board.files import StagedFiles
from chatbot.board.split_plan import NewChild
from chatbot.store.cards import Card, CardChanges
from chatbot.store.questions import QuestionRow


class Applied(CardChanges, total=False):
    """What a run's validated result does besides moving its card, written once for the
    board (`BoardService.apply`), the worker's port (ports.WorkerSide) and the job's
    context (pipeline/context.py): the card's fields it sets (CardChanges), and"""

    #: The move's reason, in the card's history and its notice.
    reason: str
    #: Files the run wrote, made visible only if the move commits.
    files: StagedFiles | None
    #: A question the move asks its owners: (kind, text, options).
    question: tuple[str, str, list[str]] | None
    #: The cards a split makes.
    children: Sequence[NewChild]
    #: Queue the card's deployment instead of its next run.
    deploy: bool
    #: What the notice shows beyond the card (a report, a decision, artifacts).
    details: dict[str, Any] | None
    #: The card's new slug (a draft the planner named).
    rename_to: str | None


APPLIED_ONLY = frozenset(Applied.__optional_keys__ - CardChanges.__optional_keys__)


@dataclass(frozen=True)
class Change:
    """One move on the board, as listeners (the notifier) see it inside the transaction."""

    before: Card | None
    card: Card
    action: str
    actor: str
    reason: str
    question: QuestionRow | None = None
    details: dict[str, Any] = field(default_factory=dict)
