"""The board's columns. "Waiting for you" holds exactly the cards the owner's inbox lists
an item for (board/waiting.py), whatever their phase; every other card sits in its
phase's group (a test holds each phase to exactly one group other than waiting).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from chatbot.board.board_columns import Column
from chatbot.board.card_lists import BoardCard, CardList
from chatbot.board.web_reads import WebReads
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
    # Nothing runs until an owner starts it: planned, or sent back by its reviewer or its
    # builder's spent ladder (/why says "start it" for both).
    Group.PLANNED: (Phase.PLANNED, Phase.PLANNING_WITH_FEEDBACK),
    # A model run is queued or under way, or a split parent waits for its children. A
    # question's or a failure's phase is here only while no item of the inbox is: a run
    # is queued for it again, or it is about to ask.
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
        Phase.DRAFT_QUESTION,
        Phase.DRAFT_FAILED,
        Phase.NEEDS_HUMAN,
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
    # Decided by the inbox, not by a phase.
    Group.WAITING: (),
    Group.REVIEW: (Phase.REVIEWING,),
    # Approved, its deployment queued or under way (one pending waits for /deploy).
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

# The group of a card of each phase that does not wait for an owner.
GROUP_OF: dict[Phase, Group] = {
    phase: group for group, phases in _MEMBERS.items() for phase in phases
}


def phases_of(group: Group) -> tuple[Phase, ...]:
    """The phases whose cards the group holds when they do not wait (none: waiting)."""
    return _MEMBERS[group]


def group_of(card: BoardCard) -> Group:
    return Group.WAITING if card.waits else GROUP_OF[card.phase]


def group_counts(
    phases: dict[Phase, int], waiting: dict[Phase, int] | None = None, items: int = 0
) -> dict[Group, int]:
    """Per group, from cards per phase and the waiting cards per phase: how many cards,
    and for "Waiting for you" how many items the inbox lists (`items`); every group is
    there, empty ones with 0."""
    counts = dict.fromkeys(Group, 0)
    for phase, count in phases.items():
        counts[GROUP_OF[phase]] += count - (waiting or {}).get(phase, 0)
    counts[Group.WAITING] = items
    return counts


async def column(reads: WebReads, group: Group | None, limit: int, **query: Any) -> CardList:
    """A group's cards as the board shows them: "Waiting for you" the cards the owner's
    inbox lists, every other group its phases' cards but those (None: every card);
    `query`: card_list's text and cursors."""
    if group is None:
        return await reads.card_list(tuple(GROUP_OF), limit, **query)
    waits = group is Group.WAITING
    return await reads.card_list(phases_of(group), limit, waits=waits, **query)


def page_columns(shown: dict[Group, int]) -> list[Column]:
    """The board page's columns, one per group in Group's order, as `column` reads them."""
    return [Column(phases_of(group), shown[group], group is Group.WAITING) for group in Group]


async def all_columns(reads: WebReads, shown: dict[Group, int]) -> dict[Group, CardList]:
    """Every group's first `shown` cards as `column` gives them, in one read (the board
    page: one statement instead of one per group)."""
    return dict(zip(Group, await reads.board_columns(page_columns(shown)), strict=True))
