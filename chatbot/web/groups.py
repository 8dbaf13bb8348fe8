"""The board's columns: every phase belongs to exactly one group (a test holds it to that)."""

from __future__ import annotations

from enum import StrEnum

from chatbot.domain.phases import Phase


class Group(StrEnum):
    PLANNED = "planned"
    WORKING = "working"
    WAITING = "waiting"
    REVIEW = "review"
    READY = "ready"
    DONE = "done"


_MEMBERS: dict[Group, tuple[Phase, ...]] = {
    Group.PLANNED: (Phase.PLANNED,),
    # A model run is queued or under way, or a split parent waits for its children.
    Group.WORKING: (
        Phase.DRAFT_RUNNING,
        Phase.OPERATOR_RUNNING,
        Phase.BUILDING,
        Phase.SPLIT_REQUESTED,
        Phase.SPLIT,
        Phase.RESEARCH_REQUESTED,
        Phase.RESEARCH_RUNNING,
        Phase.INSPECTOR_RUNNING,
        Phase.FIXER_RUNNING,
        Phase.SYNTHESIS_RUNNING,
    ),
    # Nothing goes on until an owner answers, retries, fixes, splits or starts again.
    Group.WAITING: (
        Phase.DRAFT_QUESTION,
        Phase.DRAFT_FAILED,
        Phase.NEEDS_HUMAN,
        Phase.PLANNING_WITH_FEEDBACK,
        Phase.FAILED,
        Phase.RESEARCH_FAILED,
        Phase.INSPECTOR_QUESTION,
        Phase.INSPECTOR_FAILED,
        Phase.FIXER_QUESTION,
        Phase.FIXER_FAILED,
        Phase.SYNTHESIS_FAILED,
        Phase.INTERRUPTED,
        Phase.SPLIT_PLAN_WAITING,
    ),
    Group.REVIEW: (Phase.REVIEWING,),
    Group.READY: (Phase.READY_FOR_DEPLOYMENT,),
    Group.DONE: (Phase.DEPLOYED, Phase.DONE, Phase.RESEARCH_DONE, Phase.ARCHIVED),
}

GROUP_OF: dict[Phase, Group] = {
    phase: group for group, phases in _MEMBERS.items() for phase in phases
}
