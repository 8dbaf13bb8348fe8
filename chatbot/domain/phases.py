"""Card phases and kinds, with the German labels shown when `locale = "de"`."""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    INTENT = "intent"
    RESEARCH = "research"
    DRAFT = "draft"


class Phase(StrEnum):
    DRAFT_RUNNING = "draft_running"
    DRAFT_QUESTION = "draft_question"
    DRAFT_FAILED = "draft_failed"
    PLANNED = "planned"
    OPERATOR_RUNNING = "operator_running"
    NEEDS_HUMAN = "needs_human"
    BUILDING = "building"
    SPLIT_REQUESTED = "split_requested"
    SPLIT = "split"
    DONE = "done"
    REVIEWING = "reviewing"
    READY_FOR_DEPLOYMENT = "ready_for_deployment"
    DEPLOYED = "deployed"
    PLANNING_WITH_FEEDBACK = "planning_with_feedback"
    FAILED = "failed"
    RESEARCH_REQUESTED = "research_requested"
    RESEARCH_RUNNING = "research_running"
    RESEARCH_DONE = "research_done"
    RESEARCH_FAILED = "research_failed"
    INSPECTOR_RUNNING = "inspector_running"
    INSPECTOR_QUESTION = "inspector_question"
    INSPECTOR_FAILED = "inspector_failed"
    FIXER_RUNNING = "fixer_running"
    FIXER_QUESTION = "fixer_question"
    FIXER_FAILED = "fixer_failed"
    ARCHIVED = "archived"
    SYNTHESIS_RUNNING = "synthesis_running"
    SYNTHESIS_FAILED = "synthesis_failed"
    # The owner stopped a builder's or fixer's turn (/interrupt): its session and
    # worktree wait for /steer (go on with new instructions), /fix or /cancel.
    INTERRUPTED = "interrupted"
    # `confirm_splits`: the operator's split plan waits for the owner's approval;
    # nothing of it exists yet but the plan in the card's data.
    SPLIT_PLAN_WAITING = "split_plan_waiting"

    @property
    def is_running(self) -> bool:
        """A model run is queued or under way; the card is not waiting for a person."""
        return self in RUNNING_PHASES

    def label(self, locale: str = "en") -> str:
        if locale == "de":
            return GERMAN_LABELS[self]
        return self.value.replace("_", " ")


RUNNING_PHASES: frozenset[Phase] = frozenset(
    {
        Phase.DRAFT_RUNNING,
        Phase.OPERATOR_RUNNING,
        Phase.BUILDING,
        Phase.SPLIT_REQUESTED,
        Phase.REVIEWING,
        Phase.RESEARCH_REQUESTED,
        Phase.RESEARCH_RUNNING,
        Phase.INSPECTOR_RUNNING,
        Phase.FIXER_RUNNING,
        Phase.SYNTHESIS_RUNNING,
    }
)

# Where an inspection or a repair waits (a question, a failure). Such a run returns
# the card to where it was, so passing through these keeps the phase to return to.
DETOUR_PHASES: frozenset[Phase] = frozenset(
    {
        Phase.INSPECTOR_QUESTION,
        Phase.INSPECTOR_FAILED,
        Phase.FIXER_QUESTION,
        Phase.FIXER_FAILED,
        Phase.INTERRUPTED,
    }
)

# Phases whose card waits for an owner's answer, and the kind of answer its next
# run reads (what an answer there answers even when no question row is open).
QUESTION_KIND: dict[Phase, str] = {
    Phase.NEEDS_HUMAN: "needs_human",
    Phase.DRAFT_QUESTION: "draft",
    Phase.INSPECTOR_QUESTION: "inspector",
    Phase.FIXER_QUESTION: "fixer",
    # An answer there is the owner's reason against the plan: the operator runs again.
    Phase.SPLIT_PLAN_WAITING: "split_plan",
}
QUESTION_PHASES: frozenset[Phase] = frozenset(QUESTION_KIND)

# Nothing more is to be done with a card here (archive and inspect aside).
END_PHASES: frozenset[Phase] = frozenset({Phase.DEPLOYED, Phase.DONE, Phase.ARCHIVED})

# A card here no longer needs its git worktree (its branch stays for the record).
WORKTREE_DONE_PHASES: frozenset[Phase] = frozenset({Phase.DEPLOYED, Phase.ARCHIVED})


def child_success_phases(deploy_configured: bool) -> frozenset[Phase]:
    """When a split's child counts as done: approved, or deployed where deploys run.

    With a deploy command, dependents wait for the merge so they build on it.
    """
    if deploy_configured:
        return frozenset({Phase.DEPLOYED, Phase.DONE})
    return frozenset({Phase.READY_FOR_DEPLOYMENT, Phase.DEPLOYED, Phase.DONE})


GERMAN_LABELS: dict[Phase, str] = {
    Phase.DRAFT_RUNNING: "entwurf_laeuft",
    Phase.DRAFT_QUESTION: "entwurf_frage",
    Phase.DRAFT_FAILED: "entwurf_fehlgeschlagen",
    Phase.PLANNED: "geplant",
    Phase.OPERATOR_RUNNING: "operator_laeuft",
    Phase.NEEDS_HUMAN: "operator_klaerung_noetig",
    Phase.BUILDING: "in_umsetzung",
    Phase.SPLIT_REQUESTED: "aufteilen_angefordert",
    Phase.SPLIT: "aufgeteilt",
    Phase.DONE: "erledigt",
    Phase.REVIEWING: "review",
    Phase.READY_FOR_DEPLOYMENT: "bereit_fuer_deployment",
    Phase.DEPLOYED: "ausgerollt",
    Phase.PLANNING_WITH_FEEDBACK: "planung_mit_feedback",
    Phase.FAILED: "fehlgeschlagen",
    Phase.RESEARCH_REQUESTED: "recherche_angefordert",
    Phase.RESEARCH_RUNNING: "recherche_laeuft",
    Phase.RESEARCH_DONE: "recherche_fertig",
    Phase.RESEARCH_FAILED: "recherche_fehlgeschlagen",
    Phase.INSPECTOR_RUNNING: "inspector_laeuft",
    Phase.INSPECTOR_QUESTION: "inspector_rueckfrage",
    Phase.INSPECTOR_FAILED: "inspector_fehlgeschlagen",
    Phase.FIXER_RUNNING: "fixer_laeuft",
    Phase.FIXER_QUESTION: "fixer_rueckfrage",
    Phase.FIXER_FAILED: "fixer_fehlgeschlagen",
    Phase.ARCHIVED: "archiviert",
    Phase.SYNTHESIS_RUNNING: "synthese_laeuft",
    Phase.SYNTHESIS_FAILED: "synthese_fehlgeschlagen",
    Phase.INTERRUPTED: "unterbrochen",
    Phase.SPLIT_PLAN_WAITING: "aufteilungsplan_wartet",
}
