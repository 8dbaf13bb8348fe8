"""What the web board's "Waiting for you" holds: the cards the owner's inbox lists an
item for (board/inbox.py `inbox`), said in SQL so that the board's bounded reads
(card_lists.py) can walk them, leave them out of the other columns and count them.

The inbox lists a card for an open question (a split plan's too), an open approval of
its agent, a follow-up card its agent proposed, a run waiting for the provider's
quota, and, when nothing of these and no
job holds it, a card that waits itself: a failure's ways on, a budget's stop, an
interrupted run, an approved card with its deployment pending. The inbox's count adds
the items that are no card: requesters' requests (and a quota wait of a job without a
card). tests/web/test_waiting_truth.py holds this to `inbox` kind by kind.
"""

from __future__ import annotations

from chatbot.domain import ways
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Stage
from chatbot.store import Db

_FAILED = ", ".join(f"'{phase.value}'" for phase in ways.FAILED_WAYS)
_PHASES = f"{_FAILED}, '{Phase.READY_FOR_DEPLOYMENT.value}'"
_ASKED = "EXISTS (SELECT 1 FROM questions wq WHERE wq.card_id = c.id AND wq.state = 'open')"
_APPROVAL = (
    "EXISTS (SELECT 1 FROM run_talk wt WHERE wt.card_id = c.id AND wt.kind = 'approval' "
    "AND wt.state = 'open')"
)
_PROPOSED = "EXISTS (SELECT 1 FROM proposals wp WHERE wp.card_id = c.id AND wp.state = 'pending')"
# The active states as the one-active-job index says them, so that it finds the job.
_QUOTA = (
    "EXISTS (SELECT 1 FROM jobs wj WHERE wj.card_id = c.id "
    "AND wj.state IN ('queued', 'running') AND wj.state = 'queued' AND wj.not_before > :now)"
)
_BUSY = (
    "EXISTS (SELECT 1 FROM jobs wb WHERE wb.card_id = c.id AND wb.state IN ('queued', 'running'))"
)
# needs_human is a failure only after the operator's run failed (ways.ways_forward); a
# budget's stop there is always the operator's (transitions.RUN_FAILURE). No part may be
# NULL: NOT WAITS_SQL must hold for every card that does not wait.
_ITSELF = (
    f"c.phase IN ({_PHASES}) "
    "AND (c.phase <> 'ready_for_deployment' OR coalesce(c.deployment_status, '') = 'pending') "
    f"AND NOT (c.phase = 'needs_human' AND coalesce(c.failure_stage, '') <> "
    f"'{Stage.OPERATOR.value}') AND NOT {_ASKED} AND NOT {_BUSY}"
)
#: True for a card (`cards c`) the inbox lists; `:now` judges a quota wait.
WAITS_SQL = f"({_ASKED} OR {_APPROVAL} OR {_PROPOSED} OR {_QUOTA} OR ({_ITSELF}))"
# A card of a phase that never waits itself waits only for a question, an approval or
# the provider's quota: the same rule, a fifth of the text for the planner to read.
_WAITS_WHILE_WORKED_ON = f"({_ASKED} OR {_APPROVAL} OR {_PROPOSED} OR {_QUOTA})"
_WAITS_ITSELF = frozenset({*ways.FAILED_WAYS, Phase.READY_FOR_DEPLOYMENT})


def waits_sql(phase: Phase) -> str:
    """WAITS_SQL for a card known to be in `phase`."""
    return WAITS_SQL if phase in _WAITS_ITSELF else _WAITS_WHILE_WORKED_ON


#: The ids of every card that may wait, each from an index: a superset of WAITS_SQL's, so
#: that "Waiting for you" reads a few rows, not the whole board.
CANDIDATES_SQL = (
    "SELECT card_id FROM questions WHERE state = 'open' "
    "UNION SELECT card_id FROM run_talk WHERE kind = 'approval' AND state = 'open' "
    "UNION SELECT card_id FROM proposals WHERE state = 'pending' "
    "UNION SELECT card_id FROM jobs WHERE state = 'queued' AND not_before > :now "
    f"UNION SELECT id FROM cards WHERE phase IN ({_FAILED}) "
    # Approved cards pile up where deploys are queued; only a pending one may wait.
    "UNION SELECT id FROM cards WHERE phase = 'ready_for_deployment' "
    "AND deployment_status = 'pending'"
)
#: Exactly the cards WAITS_SQL holds for, as rows (id, phase, updated_at): each part of
#: the rule read whole along its index, not tested card by card. A board page reads it
#: once (a WITH) and each column asks membership of the few rows of its own phases,
#: instead of the rule per card and column. No NULL id: `id NOT IN` a set holding NULL
#: would leave out every card.
WAITING_CARDS_SQL = (
    "SELECT c.id, c.phase, c.updated_at FROM cards c WHERE c.id IN ("
    "SELECT card_id FROM questions WHERE state = 'open' "
    "UNION ALL SELECT card_id FROM run_talk WHERE kind = 'approval' AND state = 'open' "
    "UNION ALL SELECT card_id FROM proposals WHERE state = 'pending' "
    "UNION ALL SELECT card_id FROM jobs WHERE state IN ('queued', 'running') "
    "AND state = 'queued' AND not_before > :now AND card_id IS NOT NULL) "
    # _ITSELF in two halves, each along cards_waits_itself (phase, deployment_status,
    # failure_stage, updated_at, id) alone: approved cards that pile up are passed over.
    f"UNION SELECT c.id, c.phase, c.updated_at FROM cards c WHERE c.phase IN ({_FAILED}) "
    f"AND {_ITSELF} "
    "UNION SELECT c.id, c.phase, c.updated_at FROM cards c "
    f"WHERE c.phase = 'ready_for_deployment' AND c.deployment_status = 'pending' AND {_ITSELF}"
)
# The live counts (web/live.py) read it on every change of the board: the set, then count.
_PER_PHASE_SQL = f"SELECT phase, count(*) FROM ({WAITING_CARDS_SQL}) AS w GROUP BY phase"
# One item per request, question, approval, quota wait and agent's proposal, and per
# card waiting itself.
_ITEMS_SQL = (
    "SELECT (SELECT count(*) FROM requests WHERE state = 'pending') "
    "+ (SELECT count(*) FROM questions WHERE state = 'open') "
    "+ (SELECT count(*) FROM run_talk WHERE kind = 'approval' AND state = 'open') "
    "+ (SELECT count(*) FROM jobs WHERE state = 'queued' AND not_before > :now) "
    "+ (SELECT count(*) FROM proposals WHERE state = 'pending') "
    f"+ (SELECT count(*) FROM cards c WHERE c.phase IN ({_PHASES}) AND {_ITSELF})"
)


async def waiting_phases(db: Db, now: float) -> dict[Phase, int]:
    """How many cards of each phase wait for an owner."""
    rows = await db.fetchall(_PER_PHASE_SQL, {"now": now})
    return {Phase(phase): count for phase, count in rows}


async def inbox_count(db: Db, now: float) -> int:
    """How many items the inbox lists (a card may have more than one: two approvals)."""
    row = await db.fetchone(_ITEMS_SQL, {"now": now})
    assert row is not None
    return int(row[0] or 0)
