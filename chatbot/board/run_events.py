"""What the worker tells of its runs: one record per event, one protocol to hear them.

The worker (chatbot/pipeline) tells; the notifier (chatbot/notify) and the metrics
(chatbot/web) hear. Both sides import this module, so it lives with the board that
both may import. An observer has one method, `hear`, and tells the events apart by
their type (`match event: case RunStarted(): ...`): a checker can follow every
event to where it is heard, and `assert_never` in a `match` makes a new event that
an observer forgot a type error instead of a notice that is quietly never posted.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from chatbot.domain.budgets import BudgetState
from chatbot.store import StoreError
from chatbot.store.cards import Card
from chatbot.store.proposals import Proposal
from chatbot.store.questions import QuestionRow
from chatbot.store.talk import TalkRow
from chatbot.store.telemetry import RunRecord
from runners.runtimes import Limited

log = logging.getLogger(__name__)

# --- a model run ------------------------------------------------------------------


@dataclass(frozen=True)
class RunStarted:
    card: Card
    role: str
    runtime: str
    model: str
    job_id: int


@dataclass(frozen=True)
class RunProgress:
    """Every `progress_interval_s` while a run goes on: how long, and its latest step."""

    card: Card
    job_id: int
    role: str
    elapsed: float
    step: str | None


@dataclass(frozen=True)
class RunFinished:
    card: Card
    record: RunRecord


@dataclass(frozen=True)
class ProviderLimited:
    """The provider's quota or rate limit stopped a run: it went on with the lane's
    fallback (`fell_back`), or its job waits until `at`."""

    card: Card
    runtime: str
    limited: Limited
    fell_back: bool
    at: float | None = None


@dataclass(frozen=True)
class RunNote:
    """A line for the run's status message: the text `key` with its `values`."""

    card: Card
    job_id: int
    key: str
    values: dict[str, Any]


# --- the repository's checks on a commit (pipeline/gate.py) --------------------------


@dataclass(frozen=True)
class ChecksFinished:
    card: Card
    record: dict[str, Any]


@dataclass(frozen=True)
class ChecksSentBack:
    """The checks failed; the `role` gets iteration `iteration` of `limit`."""

    card: Card
    record: dict[str, Any]
    role: str
    iteration: int
    limit: int


# --- talking to a running agent (pipeline/talking.py) ---------------------------------


@dataclass(frozen=True)
class ApprovalRequested:
    card: Card
    row: TalkRow
    why: str


@dataclass(frozen=True)
class ApprovalTimedOut:
    card: Card
    row: TalkRow
    why: str


@dataclass(frozen=True)
class ApprovalFlood:
    """The run asked too often; this and later requests are refused unasked."""

    card: Card
    row: TalkRow
    why: str


@dataclass(frozen=True)
class SteerRefused:
    card: Card
    row: TalkRow
    why: str


# --- a working agent's questions and proposals (pipeline/run_tools.py) ---------------


@dataclass(frozen=True)
class AgentAsked:
    card: Card
    question: QuestionRow


@dataclass(frozen=True)
class AgentAskTimedOut:
    card: Card
    question: QuestionRow
    why: str


@dataclass(frozen=True)
class AgentAskClosed:
    card: Card
    question: QuestionRow
    why: str


@dataclass(frozen=True)
class AgentProposed:
    card: Card
    proposal: Proposal


# --- the worker ---------------------------------------------------------------------


@dataclass(frozen=True)
class BudgetHeld:
    """Today's budget is spent: queued model runs wait (told once per day and allowance)."""

    state: BudgetState


RunEvent = (
    RunStarted
    | RunProgress
    | RunFinished
    | ProviderLimited
    | RunNote
    | ChecksFinished
    | ChecksSentBack
    | ApprovalRequested
    | ApprovalTimedOut
    | ApprovalFlood
    | SteerRefused
    | AgentAsked
    | AgentAskTimedOut
    | AgentAskClosed
    | AgentProposed
    | BudgetHeld
)


class RunObserver(Protocol):
    async def hear(self, event: RunEvent) -> None: ...


async def tell(observers: Iterable[RunObserver], event: RunEvent) -> None:
    """Tell every observer; one that fails is logged and the others still hear it,
    for a notice that cannot be written must not fail the run or the worker."""
    for observer in observers:
        try:
            await observer.hear(event)
        except StoreError as error:  # the database's state, said by the store already
            log.warning("run notice %s not written: %s", type(event).__name__, error)
        except Exception:
            log.exception("run observer failed on %s", type(event).__name__)
