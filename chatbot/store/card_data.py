"""What a card keeps besides its columns (the `data` column, JSON): one typed model.

Every key the bot writes is a field with its default, and nested records have their
fixed shapes, so the type checker holds every read and write. A write is validated
in full (`CardData.updated`, the store's encoding): a wrong key or shape is a bug and
fails at once. A read is forgiving, because an upgraded bot reads rows an older one
wrote ("Upgrades never brick"): a key it does not know is dropped, and a value of the
wrong shape gives way to the field's default (or, where a default would loosen a rule,
to the safe side: unreadable checks hold a deploy), each with a warning that names the
card and the key (once per process); the row itself is rewritten by the card's next write.
No migration reshapes old rows: every shape written so far is the one below.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, NotRequired, Unpack

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

# pydantic reads a TypedDict's fields from typing_extensions' on Python 3.11.
from typing_extensions import TypedDict

log = logging.getLogger(__name__)


class Review(TypedDict):
    """One reviewer's verdict on a commit, with its report."""

    commit: str
    decision: str
    report: str


class Answer(TypedDict):
    """An owner's answer to a question of the card (kind: who asked)."""

    kind: str
    question: str
    answer: str
    by: str


class ChatOrigin(TypedDict):
    """The chat a draft's dialogue began in (its questions go there)."""

    transport: str
    target_kind: str
    target: str


class KeptEvidence(TypedDict):
    """An inspector's evidence (the contracts' Evidence), as the card keeps it."""

    source: str
    finding: str


class Inspection(TypedDict):
    """The inspector's last result: a status inspection or a routing (the contracts'
    InspectionResult or RoutingResult, dumped), and what the owner did with a routing's
    recommendation."""

    schema_version: int
    mode: str
    summary: str
    question: str | None
    required_action: str | None
    # An inspection of the implementation's status:
    repository_status: NotRequired[str]
    deployment_status: NotRequired[str]
    checked_revision: NotRequired[str | None]
    repository_evidence: NotRequired[list[KeptEvidence]]
    deployment_evidence: NotRequired[list[KeptEvidence]]
    model_deployment_status: NotRequired[str | None]
    deployment_status_discrepancy: NotRequired[bool]
    # A routing:
    outcome: NotRequired[str]
    recommended_action: NotRequired[str | None]
    basis: NotRequired[list[KeptEvidence]]
    pending: NotRequired[bool]
    applied_by: NotRequired[str]
    dismissed_by: NotRequired[str]


class Interruption(TypedDict):
    """The session an owner's /interrupt left waiting, for /steer or /fix."""

    session: str | None
    runtime: str
    role: str


class Synthesis(TypedDict):
    path: str
    gaps: list[str]


class BudgetStop(TypedDict):
    """A run the budget stopped (domain/budgets.py BudgetState), valid while the card's
    version is the one the stop made."""

    scope: str
    spent: float
    limit: float
    budget: float
    allowances: int
    key: str
    role: str
    version: int


class ChecksRecord(TypedDict):
    """The repository's checks of one commit (runners/checks.py ChecksResult.record).

    Only the commit and the verdict are required: they alone decide whether a deploy is
    held, so a record missing the rest must still hold it, not read as "no checks"."""

    commit: str
    verdict: str
    command: NotRequired[list[str]]
    duration_s: NotRequired[float]
    exit_code: NotRequired[int | None]
    tail: NotRequired[str]


class PlannedChild(TypedDict):
    """A child an operator's split plan would create (board/split_plan.py)."""

    slug: str
    title: str
    intent_path: str
    blocked_by: list[str]
    fields: dict[str, Any]
    intent_markdown: str


Turn = tuple[str, str]  # who ("owner", "planner") and what they said


class DataChanges(TypedDict, total=False):
    """The fields of CardData as keywords of `CardData.updated` (tests/board/test_card_data.py
    holds the two to the same names and types)."""

    reviews: list[Review]
    answers: list[Answer]
    conversation: list[Turn]
    origin: ChatOrigin | None
    draft_slug: str | None
    inspection: Inspection | None
    inspect_mode: str | None
    split_plan: list[PlannedChild]
    auto_start: bool
    operator_reason: str | None
    budget_stop: BudgetStop | None
    budget_allowances: int
    interrupted: Interruption | None
    synthesis: Synthesis | None
    research_report: str | None
    builder_report: str
    limit_reached: bool
    fixer_rounds: int
    checks: ChecksRecord | None


class CardData(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    #: The reviewer's verdicts, oldest first.
    reviews: list[Review] = Field(default_factory=list)
    #: The owner's answers to the card's questions, oldest first.
    answers: list[Answer] = Field(default_factory=list)
    #: A draft's intake dialogue.
    conversation: list[Turn] = Field(default_factory=list)
    origin: ChatOrigin | None = None
    #: The draft's own name, kept when its intent gave the card a new one.
    draft_slug: str | None = None
    inspection: Inspection | None = None
    #: The mode of the last inspection asked for ("implementation_status", "route_next").
    inspect_mode: str | None = None
    #: An operator's split waiting for the owner's /confirm (confirm_splits).
    split_plan: list[PlannedChild] = Field(default_factory=list)
    #: A split's child that starts by itself once its dependencies are done.
    auto_start: bool = False
    operator_reason: str | None = None
    budget_stop: BudgetStop | None = None
    #: How many times the owner's /allow raised this card's budget.
    budget_allowances: int = 0
    interrupted: Interruption | None = None
    synthesis: Synthesis | None = None
    #: The researcher's report in the repository.
    research_report: str | None = None
    builder_report: str = ""
    #: The builder spent its last iteration limit with no ladder step left (/split offered).
    limit_reached: bool = False
    #: The fixer's question rounds in this repair.
    fixer_rounds: int = 0
    checks: ChecksRecord | None = None

    def updated(self, **changes: Unpack[DataChanges]) -> CardData:
        """A copy with `changes`, validated (model_copy would not validate them)."""
        return CardData.model_validate({**self.model_dump(), **changes})

    def stored(self) -> dict[str, Any]:
        """The JSON object the `data` column keeps: the fields that differ from their
        defaults (a reader of an old row meets the same defaults)."""
        return self.model_dump(mode="json", exclude_defaults=True)

    @classmethod
    def written(cls, value: CardData | Mapping[str, Any]) -> CardData:
        """What a write puts in the column, validated in full: a key or shape no field
        takes is a bug of the writer (ValidationError)."""
        return value if isinstance(value, CardData) else cls.model_validate(dict(value))

    @classmethod
    def read(cls, raw: object, card: str) -> CardData:
        """A stored row's data; never fails (see the module's docstring)."""
        if not isinstance(raw, Mapping):
            _warn(card, "(the whole object)", f"not an object but {type(raw).__name__}")
            return cls()
        values = dict(raw)
        for key in sorted(set(values) - set(cls.model_fields)):
            _warn(card, key, "unknown, dropped")
            del values[key]
        dropped: set[str] = set()
        try:
            return cls.model_validate(values)
        except ValidationError as error:
            for problem in error.errors():
                key = str(problem["loc"][0])
                if key in values:
                    del values[key]
                    dropped.add(key)
                    stand_in = "a record that holds a deploy" if key in _HOLDING else "its default"
                    _warn(card, key, f"of the wrong shape ({problem['msg']}), read as {stand_in}")
        return cls.model_validate({**values, **{k: v for k, v in _HOLDING.items() if k in dropped}})


# Where a field's default would loosen a rule, an unreadable value reads as the safe
# side instead: checks no deploy can match (held until the owner's --skip-checks), not
# "no checks were set".
_HOLDING: dict[str, object] = {"checks": {"commit": "", "verdict": "unreadable"}}
_warned: set[tuple[str, str]] = set()


def _warn(card: str, key: str, why: str) -> None:
    # Pages and the worker read the same card again and again: one warning per key.
    if (card, key) not in _warned:
        _warned.add((card, key))
        log.warning("card %s: its data's %s is %s", card, key, why)


# Records built from plain dicts (a contract's model_dump, runners' checks record, the
# chat layer's origin): validated where they enter the card, typed from then on.
_CHECKS = TypeAdapter(ChecksRecord)
_INSPECTION = TypeAdapter(Inspection)
_REVIEW = TypeAdapter(Review)
_ORIGIN = TypeAdapter(ChatOrigin)
_BUDGET_STOP = TypeAdapter(BudgetStop)


def checks_record(raw: Mapping[str, object]) -> ChecksRecord:
    return _CHECKS.validate_python(raw)


def inspection_record(raw: Mapping[str, object]) -> Inspection:
    return _INSPECTION.validate_python(raw)


def review_record(raw: Mapping[str, object]) -> Review:
    return _REVIEW.validate_python(raw)


def origin_record(raw: Mapping[str, object]) -> ChatOrigin:
    return _ORIGIN.validate_python(raw)


def budget_stop_record(raw: Mapping[str, object]) -> BudgetStop:
    return _BUDGET_STOP.validate_python(raw)
