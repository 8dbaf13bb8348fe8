"""What an owner's action writes on its card besides the phase.

- the inspector's mode (kept, so a retry inspects in the mode that failed);
- the pipeline run id: a new one whenever the owner starts a card's pipeline afresh
  (`/start`, `/research`), and one for a card that has none when a run is queued for it
  (a split's children carry their parent's, started again too), so every run's
  telemetry names its pipeline;
- `/allow`: one more card budget;
- the fixer's attempts: each repair the owner asks for (a retry too) counts.
"""

from __future__ import annotations

import secrets
from typing import Any

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store.cards import Card

# A new run of the whole pipeline, not the next step of the running one.
_FRESH_PIPELINE = frozenset({Action.START, Action.RESEARCH})
# Owner actions that queue no model run.
_NO_RUN = frozenset({Action.ARCHIVE, Action.CANCEL, Action.DEPLOY})


def new_pipeline_id() -> str:
    """Short enough to type on a phone (`/runs 3f9c0a1b2d4e`), long enough never to repeat."""
    return secrets.token_hex(6)


def owner_changes(before: Card, action: Action, payload: dict[str, Any] | None) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    data = before.data
    if action is Action.INSPECT and payload and payload.get("mode"):
        data = data.updated(inspect_mode=str(payload["mode"]))
    if action is Action.ALLOW:
        data = data.updated(budget_allowances=data.budget_allowances + 1)
    if data is not before.data:
        changes["data"] = data
    # A split's child started again stays in its parent's pipeline, so that the
    # pipeline's page and /runs <pipeline> keep every card and run of the split.
    fresh = action in _FRESH_PIPELINE and before.parent_id is None
    if fresh or (action not in _NO_RUN and not before.pipeline_run_id):
        changes["pipeline_run_id"] = new_pipeline_id()
    repair_again = action in (Action.RETRY, Action.ALLOW) and before.phase is Phase.FIXER_FAILED
    if action in (Action.FIX, Action.COMMENT) or repair_again:
        changes["fixer_attempts"] = before.fixer_attempts + 1
    return changes
