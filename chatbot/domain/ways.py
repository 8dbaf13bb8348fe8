"""A failed card's ways forward: the owner's moves the chat names for it, as data.

One table for what the failure notices suggest (tests/board/test_ways_forward.py holds
each notice to it, and each move in it to the transition table), for the line /status
and `chatbot card` show, and for `ways_forward` in `chatbot card --json`.
"""

from __future__ import annotations

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action, Stage

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "Action",
]

A = Action

# In the order the chat names them: the likeliest way first.
FAILED_WAYS: dict[Phase, tuple[Action, ...]] = {
    Phase.FAILED: (A.RETRY, A.FIX),
    # Only after a failed operator run (its question carries the failure).
    Phase.NEEDS_HUMAN: (A.ANSWER, A.RETRY),
    Phase.DRAFT_FAILED: (A.RETRY,),
    Phase.RESEARCH_FAILED: (A.RETRY,),
    Phase.INSPECTOR_FAILED: (A.RETRY, A.CANCEL),
    Phase.FIXER_FAILED: (A.RETRY, A.CANCEL),
    Phase.SYNTHESIS_FAILED: (A.RETRY, A.CANCEL),
    # Not a failure: the owner stopped the turn; these go on from there.
    Phase.INTERRUPTED: (A.STEER, A.FIX, A.CANCEL),
}
# A repair whose commits never passed the checks: as after a builder's (/retry, with
# --skip-checks once, or /fix), and /cancel as after any repair.
CHECKS_WAYS: dict[Phase, tuple[Action, ...]] = {
    Phase.FIXER_FAILED: (A.RETRY, A.FIX, A.CANCEL),
}
# A run its budget stopped: more budget for the card, or a raised budget and /retry.
BUDGET_WAYS: tuple[Action, ...] = (A.ALLOW, A.RETRY)


def ways_forward(
    phase: Phase, failure_stage: str | None, *, budget_stopped: bool = False
) -> tuple[Action, ...]:
    """The moves on for a card that failed (or was stopped by its budget); () otherwise."""
    if budget_stopped:
        return BUDGET_WAYS
    if phase is Phase.NEEDS_HUMAN and failure_stage != Stage.OPERATOR.value:
        return ()  # the operator asked something: nothing failed
    if failure_stage == Stage.CHECKS.value and phase in CHECKS_WAYS:
        return CHECKS_WAYS[phase]
    return FAILED_WAYS.get(phase, ())
