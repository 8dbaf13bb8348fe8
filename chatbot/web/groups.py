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
    ARCHIVED = "archived"


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
    Group.DONE: (Phase.DEPLOYED, Phase.DONE, Phase.RESEARCH_DONE),
    Group.ARCHIVED: (Phase.ARCHIVED,),
}

# How many cards a group's column shows, most recent first; the rest are on /cards.
# Planned, ready, done and archived grow with the board's age: their most recent.
# The others are bounded by lanes and by people's attention and show every card; the
# bound is there only so that a board gone wrong (thousands failed) still loads.
SHOWN: dict[Group, int] = {
    Group.PLANNED: 50,
    Group.WORKING: 200,
    Group.WAITING: 200,
    Group.REVIEW: 200,
    Group.READY: 50,
    Group.DONE: 20,
    Group.ARCHIVED: 20,
}

GROUP_OF: dict[Phase, Group] = {
    phase: group for group, phases in _MEMBERS.items() for phase in phases
}


def phases_of(group: Group) -> tuple[Phase, ...]:
    return _MEMBERS[group]


def group_counts(phases: dict[Phase, int]) -> dict[Group, int]:
    """Cards per group, from cards per phase; every group is there, empty ones with 0."""
    counts = dict.fromkeys(Group, 0)
    for phase, count in phases.items():
        counts[GROUP_OF[phase]] += count
    return counts
