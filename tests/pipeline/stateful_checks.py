"""The invariants of the stateful test, as queries that return what breaks them.

Each function looks at the committed board (the store's reader) and returns the
offending rows, empty when the invariant holds, so a failure names the cards.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

from chatbot.board import BoardService, Change
from chatbot.domain.phases import RUNNING_PHASES, Phase
from chatbot.domain.transitions import Action, allowed_actions
from chatbot.store import Db
from chatbot.store import cards as card_store
from chatbot.store.cards import Card
from tests.pipeline.stateful_world import ACTOR, Delivery

# Where a card waits for a person because something failed or was asked.
STUCK = frozenset(
    {
        Phase.FAILED,
        Phase.NEEDS_HUMAN,
        Phase.DRAFT_FAILED,
        Phase.RESEARCH_FAILED,
        Phase.INSPECTOR_FAILED,
        Phase.FIXER_FAILED,
    }
)
NOT_A_WAY_FORWARD = frozenset({Action.ARCHIVE, Action.INSPECT})
# The phase each kind of question is asked from.
ASKED_IN = {
    "needs_human": Phase.NEEDS_HUMAN,
    "operator_failed": Phase.NEEDS_HUMAN,
    "draft": Phase.DRAFT_QUESTION,
    "inspector": Phase.INSPECTOR_QUESTION,
    "fixer": Phase.FIXER_QUESTION,
}


def ways_forward(card: Card) -> list[Action]:
    """The owner commands the transition table allows that move the card on."""
    allowed = allowed_actions(card.phase, card.kind, card.failure_stage)
    return [action for action in allowed if action not in NOT_A_WAY_FORWARD]


async def cards_with_two_jobs(db: Db) -> list[tuple[Any, ...]]:
    rows = await db.fetchall(
        "SELECT c.slug, count(*) FROM jobs j JOIN cards c ON c.id = j.card_id "
        "WHERE j.state IN ('queued', 'running') GROUP BY c.id HAVING count(*) > 1"
    )
    return [tuple(r) for r in rows]


async def running_without_a_job(db: Db, lanes: Collection[str]) -> list[tuple[Any, ...]]:
    """Cards in a running phase with no queued or running job, and jobs queued in a lane
    no worker claims (which would never run either)."""
    rows = await db.fetchall(
        "SELECT c.slug, c.phase, j.state, j.lane FROM cards c LEFT JOIN jobs j "
        "ON j.card_id = c.id AND j.state IN ('queued', 'running')"
    )
    running = {phase.value for phase in RUNNING_PHASES}
    idle = [(r[0], r[1]) for r in rows if r[1] in running and r[2] is None]
    lost = [
        (r[0], f"queued in lane {r[3]}") for r in rows if r[2] == "queued" and r[3] not in lanes
    ]
    return idle + lost


async def outbox_problems(db: Db, delivered: Sequence[Delivery]) -> list[str]:
    """Rows the transport received more than once, deliveries that are not their row's
    recorded send, and rows marked sent that never went out."""
    times = Counter(d.txn_id for d in delivered)
    twice = {d.txn_id: d.text for d in delivered if times[d.txn_id] > 1}
    if twice:
        return [f"delivered {times[txn]} times: {txn} {text!r}" for txn, text in twice.items()]
    rows = {
        r[0]: (r[1], r[2])
        for r in await db.fetchall("SELECT txn_id, state, message_id FROM outbox")
    }
    problems = [
        f"delivered as {d.message_id} but the row says {rows.get(d.txn_id)}: {d.text!r}"
        for d in delivered
        if rows.get(d.txn_id) != ("sent", d.message_id)
    ]
    problems += [
        f"marked sent, never delivered: {txn}"
        for txn, (state, _) in rows.items()
        if state == "sent" and txn not in times
    ]
    return problems


async def stale_questions(db: Db) -> list[tuple[Any, ...]]:
    """Open questions on a card that is not in the phase that asks them, or that moved
    (and maybe came back) since they were asked."""
    rows = await db.fetchall(
        "SELECT c.slug, c.phase, q.kind, q.text, "
        "  (SELECT count(*) FROM events e WHERE e.card_id = c.id "
        "   AND e.at > q.created_at AND e.from_phase IS NOT e.to_phase) AS moves "
        "FROM questions q JOIN cards c ON c.id = q.card_id WHERE q.state = 'open'"
    )
    return [tuple(r) for r in rows if r["phase"] != ASKED_IN[r["kind"]].value or r["moves"]]


class _DryRun(Exception):
    def __init__(self, change: Change):
        self.change = change


async def _roll_back(_db: object, change: Change) -> None:
    raise _DryRun(change)


async def dead_ends(board: BoardService) -> list[str]:
    """Stuck cards with no way forward, or with an allowed way forward that does not
    work: each is tried for real, in a transaction that is then rolled back."""
    found = []
    for card in await card_store.all_cards(board.store.reader):
        if card.phase not in STUCK:
            continue
        where = f"{card.slug} ({card.phase.value}, failure stage {card.failure_stage})"
        actions = ways_forward(card)
        if not actions:
            found.append(f"{where}: only /archive and /inspect are allowed")
        for action in actions:
            try:
                if action is Action.ANSWER:
                    await board.answer(card.slug, "more context", actor=ACTOR, along=_roll_back)
                else:
                    await board.act(card.slug, action, actor=ACTOR, along=_roll_back)
            except _DryRun as dry:
                if dry.change.card.phase is card.phase:
                    found.append(f"{where}: /{action.value} does not move it")
            except Exception as error:  # noqa: BLE001 - any refusal is the finding
                found.append(f"{where}: /{action.value} is allowed but refused: {error}")
    return found
