"""The transition table: which action moves which phase to which, as one piece of data.

Everything that changes a card's phase looks its move up here; nothing else in the
code base decides what is legal. Owner actions come from people (chat, CLI), system
actions from the worker applying a validated model result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum

from chatbot.domain.phases import Kind, Phase


class Action(StrEnum):
    # Owner actions.
    START = "start"
    ANSWER = "answer"
    SPLIT = "split"
    RESEARCH = "research"
    INSPECT = "inspect"
    FIX = "fix"
    # A line comment on the card's change: the fixer's next task (board/comments.py).
    COMMENT = "comment"
    RETRY = "retry"
    CANCEL = "cancel"
    ARCHIVE = "archive"
    DEPLOY = "deploy"
    # Go on past a spent budget: the stopped step again, with more budget for it.
    ALLOW = "allow"
    # An interrupted builder or fixer goes on in its session with the owner's words.
    STEER = "steer"
    # The owner approves an operator's split plan (`confirm_splits`): the children are made.
    CONFIRM = "confirm"
    # System actions: the worker applying a validated result.
    OPERATOR_DIRECT = "operator_direct"
    OPERATOR_SPLIT = "operator_split"
    OPERATOR_SPLIT_PLANNED = "operator_split_planned"
    OPERATOR_NEEDS_HUMAN = "operator_needs_human"
    OPERATOR_FAILED = "operator_failed"
    BUILD_COMMITTED = "build_committed"
    BUILD_ESCALATED = "build_escalated"
    BUILD_LIMIT_SPENT = "build_limit_spent"
    BUILD_FAILED = "build_failed"
    REVIEW_APPROVED = "review_approved"
    REVIEW_REJECTED = "review_rejected"
    REVIEW_FAILED = "review_failed"
    DEPLOY_SUCCEEDED = "deploy_succeeded"
    DEPLOY_FAILED = "deploy_failed"
    SPLIT_APPLIED = "split_applied"
    SPLIT_FAILED = "split_failed"
    CHILDREN_DONE = "children_done"
    DRAFT_ASKED = "draft_asked"
    DRAFT_COMPLETED = "draft_completed"
    DRAFT_FAILED = "draft_failed"
    RESEARCH_STARTED = "research_started"
    RESEARCH_DONE = "research_done"
    RESEARCH_FAILED = "research_failed"
    INSPECTOR_ASKED = "inspector_asked"
    INSPECTOR_DONE = "inspector_done"
    INSPECTOR_FAILED = "inspector_failed"
    FIXER_ASKED = "fixer_asked"
    FIXER_COMMITTED = "fixer_committed"
    FIXER_FAILED = "fixer_failed"
    CHILD_STARTED = "child_started"
    SYNTHESIS_DONE = "synthesis_done"
    SYNTHESIS_FAILED = "synthesis_failed"
    # The owner's /interrupt stopped the turn; the card waits with its session.
    RUN_INTERRUPTED = "run_interrupted"
    # A run that was not started because its card's or the day's budget is spent.
    BUDGET_STOPPED = "budget_stopped"


class By(StrEnum):
    OWNER = "owner"
    SYSTEM = "system"


class Target(StrEnum):
    """Targets that are not a fixed phase."""

    RESUME = "resume"  # back to the stable phase the card left when its run began


class Stage(StrEnum):
    """Where a run failed; a `failed` card's `retry` re-enters the matching stage."""

    OPERATOR = "operator"
    BUILDER = "builder"
    REVIEW = "review"
    DEPLOY = "deploy"
    SPLIT = "split"
    DRAFT = "draft"
    RESEARCH = "research"
    INSPECTOR = "inspector"
    FIXER = "fixer"
    SYNTHESIS = "synthesis"
    # A builder's or fixer's commit that never passed the repository's checks; retried
    # as a builder run on top of it (`/retry <slug> --skip-checks`: unchecked, once).
    CHECKS = "checks"
    # Written by earlier versions for a failure outside any role; retried as a fresh start.
    WORKER = "worker"


@dataclass(frozen=True)
class Transition:
    action: Action
    sources: frozenset[Phase]
    target: Phase | Target
    by: By
    kinds: frozenset[Kind] = frozenset({Kind.INTENT})
    # Only for `retry` out of `failed`: the stage whose run is repeated.
    stage: Stage | None = None


def _row(
    action: Action,
    sources: Iterable[Phase],
    target: Phase | Target,
    by: By = By.SYSTEM,
    kinds: Iterable[Kind] = (Kind.INTENT,),
    stage: Stage | None = None,
) -> Transition:
    return Transition(action, frozenset(sources), target, by, frozenset(kinds), stage)


P = Phase
A = Action
OWNER = By.OWNER
ALL_KINDS = (Kind.INTENT, Kind.RESEARCH, Kind.DRAFT)

# Stable phases from which an owner may look at a card with the inspector.
_INSPECTABLE = (
    P.PLANNED,
    P.NEEDS_HUMAN,
    P.PLANNING_WITH_FEEDBACK,
    P.FAILED,
    P.SPLIT,
    P.DONE,
    P.READY_FOR_DEPLOYMENT,
    P.DEPLOYED,
)
_ARCHIVABLE = (
    P.DRAFT_QUESTION,
    P.DRAFT_FAILED,
    P.PLANNED,
    P.NEEDS_HUMAN,
    P.PLANNING_WITH_FEEDBACK,
    P.FAILED,
    P.SPLIT,
    P.DONE,
    P.READY_FOR_DEPLOYMENT,
    P.DEPLOYED,
    P.RESEARCH_DONE,
    P.RESEARCH_FAILED,
    P.INSPECTOR_QUESTION,
    P.INSPECTOR_FAILED,
    P.FIXER_QUESTION,
    P.FIXER_FAILED,
    P.SYNTHESIS_FAILED,
    P.SPLIT_PLAN_WAITING,
)
_CANCELLABLE = (
    P.OPERATOR_RUNNING,
    P.BUILDING,
    P.SPLIT_REQUESTED,
    P.REVIEWING,
    P.INSPECTOR_RUNNING,
    P.FIXER_RUNNING,
    # An inspection or repair that failed or waits for an answer can be dropped:
    # the card goes back to where it was (an approved card stays deployable).
    P.INSPECTOR_QUESTION,
    P.INSPECTOR_FAILED,
    P.FIXER_QUESTION,
    P.FIXER_FAILED,
    P.INTERRUPTED,
)

_TABLE: tuple[Transition, ...] = (
    # --- owner actions -------------------------------------------------------
    # From needs_human too: after editing the intent the owner may start afresh.
    _row(
        A.START,
        (P.PLANNED, P.NEEDS_HUMAN, P.PLANNING_WITH_FEEDBACK, P.FAILED),
        P.OPERATOR_RUNNING,
        OWNER,
    ),
    _row(A.ANSWER, (P.NEEDS_HUMAN,), P.OPERATOR_RUNNING, OWNER),
    _row(A.ANSWER, (P.DRAFT_QUESTION,), P.DRAFT_RUNNING, OWNER, (Kind.DRAFT,)),
    _row(A.ANSWER, (P.INSPECTOR_QUESTION,), P.INSPECTOR_RUNNING, OWNER, ALL_KINDS),
    _row(A.ANSWER, (P.FIXER_QUESTION,), P.FIXER_RUNNING, OWNER),
    # An answer to a split plan is a reason against it: the operator plans again.
    _row(A.ANSWER, (P.SPLIT_PLAN_WAITING,), P.OPERATOR_RUNNING, OWNER),
    _row(A.CONFIRM, (P.SPLIT_PLAN_WAITING,), P.SPLIT, OWNER),
    _row(A.SPLIT, (P.PLANNED, P.PLANNING_WITH_FEEDBACK, P.FAILED), P.SPLIT_REQUESTED, OWNER),
    _row(
        A.RESEARCH,
        (P.PLANNED, P.RESEARCH_DONE, P.RESEARCH_FAILED),
        P.RESEARCH_REQUESTED,
        OWNER,
        (Kind.RESEARCH,),
    ),
    _row(A.INSPECT, _INSPECTABLE, P.INSPECTOR_RUNNING, OWNER),
    _row(A.INSPECT, (P.PLANNED, P.RESEARCH_DONE), P.INSPECTOR_RUNNING, OWNER, (Kind.RESEARCH,)),
    # From planned too: the fixer then builds what the intent asks (as the reference allows).
    _row(
        A.FIX,
        (P.FAILED, P.PLANNING_WITH_FEEDBACK, P.PLANNED, P.INTERRUPTED),
        P.FIXER_RUNNING,
        OWNER,
    ),
    # An owner's comment on a line of the change starts the fixer with every open
    # comment; on a running builder or fixer it is a steer instead (no move).
    _row(
        A.COMMENT,
        (
            P.REVIEWING,
            P.READY_FOR_DEPLOYMENT,
            P.FAILED,
            P.PLANNING_WITH_FEEDBACK,
            P.FIXER_FAILED,
        ),
        P.FIXER_RUNNING,
        OWNER,
    ),
    # The interrupted run's stage says whose session goes on.
    _row(A.STEER, (P.INTERRUPTED,), P.BUILDING, OWNER, stage=Stage.BUILDER),
    _row(A.STEER, (P.INTERRUPTED,), P.FIXER_RUNNING, OWNER, stage=Stage.FIXER),
    _row(A.RETRY, (P.FAILED, P.NEEDS_HUMAN), P.OPERATOR_RUNNING, OWNER, stage=Stage.OPERATOR),
    _row(A.RETRY, (P.FAILED,), P.BUILDING, OWNER, stage=Stage.BUILDER),
    _row(A.RETRY, (P.FAILED,), P.BUILDING, OWNER, stage=Stage.CHECKS),
    _row(A.RETRY, (P.FAILED,), P.REVIEWING, OWNER, stage=Stage.REVIEW),
    _row(A.RETRY, (P.FAILED,), P.READY_FOR_DEPLOYMENT, OWNER, stage=Stage.DEPLOY),
    _row(A.RETRY, (P.FAILED,), P.SPLIT_REQUESTED, OWNER, stage=Stage.SPLIT),
    _row(A.RETRY, (P.FAILED,), P.OPERATOR_RUNNING, OWNER, stage=Stage.WORKER),
    _row(A.RETRY, (P.DRAFT_FAILED,), P.DRAFT_RUNNING, OWNER, (Kind.DRAFT,)),
    _row(A.RETRY, (P.RESEARCH_FAILED,), P.RESEARCH_REQUESTED, OWNER, (Kind.RESEARCH,)),
    _row(A.RETRY, (P.INSPECTOR_FAILED,), P.INSPECTOR_RUNNING, OWNER, ALL_KINDS),
    _row(A.RETRY, (P.FIXER_FAILED,), P.FIXER_RUNNING, OWNER),
    # A repair whose commits never passed the checks: a fresh repair, as after a builder's.
    _row(A.FIX, (P.FIXER_FAILED,), P.FIXER_RUNNING, OWNER, stage=Stage.CHECKS),
    _row(A.RETRY, (P.SYNTHESIS_FAILED,), P.SYNTHESIS_RUNNING, OWNER),
    _row(A.CANCEL, _CANCELLABLE, Target.RESUME, OWNER, ALL_KINDS),
    _row(A.CANCEL, (P.DRAFT_RUNNING,), P.DRAFT_FAILED, OWNER, (Kind.DRAFT,)),
    # Every child succeeded: going without the synthesis leaves the parent done.
    _row(A.CANCEL, (P.SYNTHESIS_RUNNING, P.SYNTHESIS_FAILED), P.DONE, OWNER),
    _row(
        A.CANCEL,
        (P.RESEARCH_REQUESTED, P.RESEARCH_RUNNING),
        P.RESEARCH_FAILED,
        OWNER,
        (Kind.RESEARCH,),
    ),
    _row(A.ARCHIVE, _ARCHIVABLE, P.ARCHIVED, OWNER, ALL_KINDS),
    # Deploying keeps the phase; the deploy job's result moves the card.
    _row(A.DEPLOY, (P.READY_FOR_DEPLOYMENT,), P.READY_FOR_DEPLOYMENT, OWNER),
    # --- system actions: applying a validated model or deploy result ---------
    _row(A.OPERATOR_DIRECT, (P.OPERATOR_RUNNING,), P.BUILDING),
    _row(A.OPERATOR_SPLIT, (P.OPERATOR_RUNNING,), P.SPLIT),
    _row(A.OPERATOR_SPLIT_PLANNED, (P.OPERATOR_RUNNING,), P.SPLIT_PLAN_WAITING),
    _row(A.OPERATOR_NEEDS_HUMAN, (P.OPERATOR_RUNNING,), P.NEEDS_HUMAN),
    # A failed operator run is a question for the owner: an answer reruns it with
    # more context, /retry reruns it as it is.
    _row(A.OPERATOR_FAILED, (P.OPERATOR_RUNNING,), P.NEEDS_HUMAN),
    _row(A.BUILD_COMMITTED, (P.BUILDING,), P.REVIEWING),
    _row(A.BUILD_ESCALATED, (P.BUILDING,), P.BUILDING),
    _row(A.BUILD_LIMIT_SPENT, (P.BUILDING,), P.PLANNING_WITH_FEEDBACK),
    _row(A.BUILD_FAILED, (P.BUILDING,), P.FAILED),
    _row(A.REVIEW_APPROVED, (P.REVIEWING,), P.READY_FOR_DEPLOYMENT),
    _row(A.REVIEW_REJECTED, (P.REVIEWING,), P.PLANNING_WITH_FEEDBACK),
    _row(A.REVIEW_FAILED, (P.REVIEWING,), P.FAILED),
    _row(A.DEPLOY_SUCCEEDED, (P.READY_FOR_DEPLOYMENT,), P.DEPLOYED),
    _row(A.DEPLOY_FAILED, (P.READY_FOR_DEPLOYMENT,), P.FAILED),
    _row(A.SPLIT_APPLIED, (P.SPLIT_REQUESTED,), P.SPLIT),
    _row(A.SPLIT_FAILED, (P.SPLIT_REQUESTED,), P.FAILED),
    # The children's results are summarised against the parent intent before it is done.
    _row(A.CHILDREN_DONE, (P.SPLIT,), P.SYNTHESIS_RUNNING),
    _row(A.SYNTHESIS_DONE, (P.SYNTHESIS_RUNNING,), P.DONE),
    _row(A.SYNTHESIS_FAILED, (P.SYNTHESIS_RUNNING,), P.SYNTHESIS_FAILED),
    # A child of an operator split builds with the profile the operator chose for it,
    # as soon as everything it is blocked by has succeeded.
    _row(A.CHILD_STARTED, (P.PLANNED,), P.BUILDING),
    _row(A.DRAFT_ASKED, (P.DRAFT_RUNNING,), P.DRAFT_QUESTION, kinds=(Kind.DRAFT,)),
    # The draft card becomes a planned intent card; the service changes its kind.
    _row(A.DRAFT_COMPLETED, (P.DRAFT_RUNNING,), P.PLANNED, kinds=(Kind.DRAFT,)),
    _row(A.DRAFT_FAILED, (P.DRAFT_RUNNING,), P.DRAFT_FAILED, kinds=(Kind.DRAFT,)),
    _row(A.RESEARCH_STARTED, (P.RESEARCH_REQUESTED,), P.RESEARCH_RUNNING, kinds=(Kind.RESEARCH,)),
    _row(A.RESEARCH_DONE, (P.RESEARCH_RUNNING,), P.RESEARCH_DONE, kinds=(Kind.RESEARCH,)),
    _row(
        A.RESEARCH_FAILED,
        (P.RESEARCH_REQUESTED, P.RESEARCH_RUNNING),
        P.RESEARCH_FAILED,
        kinds=(Kind.RESEARCH,),
    ),
    _row(A.INSPECTOR_ASKED, (P.INSPECTOR_RUNNING,), P.INSPECTOR_QUESTION, kinds=ALL_KINDS),
    _row(A.INSPECTOR_DONE, (P.INSPECTOR_RUNNING,), Target.RESUME, kinds=ALL_KINDS),
    _row(A.INSPECTOR_FAILED, (P.INSPECTOR_RUNNING,), P.INSPECTOR_FAILED, kinds=ALL_KINDS),
    _row(A.FIXER_ASKED, (P.FIXER_RUNNING,), P.FIXER_QUESTION),
    # A fixer's commit is reviewed like any builder commit.
    _row(A.FIXER_COMMITTED, (P.FIXER_RUNNING,), P.REVIEWING),
    _row(A.FIXER_FAILED, (P.FIXER_RUNNING,), P.FIXER_FAILED),
    _row(A.RUN_INTERRUPTED, (P.BUILDING, P.FIXER_RUNNING), P.INTERRUPTED),
)


@dataclass(frozen=True)
class RunFailure:
    """How a run that ended without a usable result is recorded on its card."""

    action: Action
    stage: Stage


# Keyed by the phase the card is in while the run goes on: the failure's stage
# follows from where the card was, never from what the failing code believed.
RUN_FAILURE: dict[Phase, RunFailure] = {
    P.OPERATOR_RUNNING: RunFailure(A.OPERATOR_FAILED, Stage.OPERATOR),
    P.BUILDING: RunFailure(A.BUILD_FAILED, Stage.BUILDER),
    P.REVIEWING: RunFailure(A.REVIEW_FAILED, Stage.REVIEW),
    P.READY_FOR_DEPLOYMENT: RunFailure(A.DEPLOY_FAILED, Stage.DEPLOY),
    P.SPLIT_REQUESTED: RunFailure(A.SPLIT_FAILED, Stage.SPLIT),
    P.DRAFT_RUNNING: RunFailure(A.DRAFT_FAILED, Stage.DRAFT),
    P.RESEARCH_REQUESTED: RunFailure(A.RESEARCH_FAILED, Stage.RESEARCH),
    P.RESEARCH_RUNNING: RunFailure(A.RESEARCH_FAILED, Stage.RESEARCH),
    P.INSPECTOR_RUNNING: RunFailure(A.INSPECTOR_FAILED, Stage.INSPECTOR),
    P.FIXER_RUNNING: RunFailure(A.FIXER_FAILED, Stage.FIXER),
    P.SYNTHESIS_RUNNING: RunFailure(A.SYNTHESIS_FAILED, Stage.SYNTHESIS),
}


# A commit that never passed the repository's checks within the iteration limit fails
# its run at stage "checks" (pipeline/gate.py) instead of the run's own stage: the
# ways on from there add the checks' own (a fresh repair, skipping them once).
CHECKS_FAILURE: dict[Phase, RunFailure] = {
    P.BUILDING: RunFailure(A.BUILD_FAILED, Stage.CHECKS),
    P.FIXER_RUNNING: RunFailure(A.FIXER_FAILED, Stage.CHECKS),
}


# Moves that stop a run without a failure, yet record its stage (as a failure would),
# so that the move on from there knows whose run to continue.
STAGE_KEEPING_ACTIONS: frozenset[Action] = frozenset({A.RUN_INTERRUPTED})


def _budget_rows(table: tuple[Transition, ...]) -> tuple[Transition, ...]:
    """A run stopped by the budget lands where its failure would: /retry and /allow work
    there as after any failure of that stage. A deploy runs no model and has no budget."""
    rows = []
    for phase, failure in RUN_FAILURE.items():
        if failure.stage is Stage.DEPLOY:
            continue
        for row in table:
            if row.action is failure.action and phase in row.sources:
                rows.append(
                    Transition(
                        A.BUDGET_STOPPED, frozenset({phase}), row.target, By.SYSTEM, row.kinds
                    )
                )
    return tuple(rows)


def _allow_rows(table: tuple[Transition, ...]) -> tuple[Transition, ...]:
    """/allow is /retry with more budget: allowed wherever a model run can be retried."""
    return tuple(
        replace(row, action=A.ALLOW)
        for row in table
        if row.action is A.RETRY and row.stage is not Stage.DEPLOY
    )


TRANSITIONS: tuple[Transition, ...] = _TABLE + _budget_rows(_TABLE) + _allow_rows(_TABLE)
OWNER_ACTIONS: frozenset[Action] = frozenset(t.action for t in TRANSITIONS if t.by is By.OWNER)
SYSTEM_ACTIONS: frozenset[Action] = frozenset(t.action for t in TRANSITIONS if t.by is By.SYSTEM)


class TransitionRefused(Exception):
    """An action that the table does not allow for this card right now."""

    def __init__(self, slug: str, phase: Phase, action: Action, allowed: list[Action]):
        self.slug = slug
        self.phase = phase
        self.action = action
        self.allowed = allowed
        allowed_text = ", ".join(a.value for a in allowed) if allowed else "nothing"
        super().__init__(
            f"card '{slug}' is in phase {phase.value}: '{action.value}' is not allowed there; "
            f"allowed: {allowed_text}"
        )


def _matches(row: Transition, phase: Phase, kind: Kind, stage: str | None) -> bool:
    if phase not in row.sources or kind not in row.kinds:
        return False
    return row.stage is None or row.stage.value == (stage or Stage.WORKER.value)


def find(
    action: Action, phase: Phase, kind: Kind, failure_stage: str | None = None
) -> Transition | None:
    for row in TRANSITIONS:
        if row.action is action and _matches(row, phase, kind, failure_stage):
            return row
    return None


def allowed_actions(
    phase: Phase,
    kind: Kind,
    failure_stage: str | None = None,
    by: By = By.OWNER,
    *,
    budget_stopped: bool = False,
) -> list[Action]:
    """What may be done now. /allow is named only on a card its budget stopped: the
    table allows it wherever a retry is, but anywhere else it would only be refused."""
    seen: dict[Action, None] = {}
    for row in TRANSITIONS:
        if row.action is A.ALLOW and not budget_stopped:
            continue
        if row.by is by and _matches(row, phase, kind, failure_stage):
            seen.setdefault(row.action)
    return list(seen)


def resolve(
    slug: str,
    action: Action,
    phase: Phase,
    kind: Kind,
    *,
    by: By,
    failure_stage: str | None = None,
    resume_phase: Phase | None = None,
) -> Phase:
    """The phase `action` moves this card to, or TransitionRefused naming what is allowed."""
    row = find(action, phase, kind, failure_stage)
    if row is None or row.by is not by:
        raise TransitionRefused(
            slug, phase, action, allowed_actions(phase, kind, failure_stage, by)
        )
    if row.target is Target.RESUME:
        return resume_phase or Phase.PLANNED
    return row.target
