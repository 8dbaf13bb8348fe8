"""The board page's columns in one statement: every column's first cards, one round trip.

PostgreSQL pays per statement (a round trip, a plan), and a page of seven columns read
one by one paid it seven times, each column testing the waiting rule (waiting.py) card
by card, and a column of many phases planning a walk per phase. Here the set of waiting
cards is read once (a WITH), every column asks membership of it, and the phases whose
cards stay few (a run's, a question's, a failure's) are walked together; only the
phases that pile up as the board ages are walked alone, each along cards_phase_recent
with a LIMIT. A column gives the same cards as card_lists.card_list (the test holds
them to it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chatbot.board.card_lists import JOINS, CardList, Cursor, board_card, columns, read_params
from chatbot.board.waiting import WAITING_CARDS_SQL
from chatbot.domain.phases import Phase
from chatbot.store import Db

# Cards stay in these for good (or until an owner gets to them): a walk over one of them
# must stop at its LIMIT, so each is walked alone. The others hold what is under way or
# waits for an answer: few, and one walk over all of them sorts a few rows.
PILING_UP = frozenset(
    {
        Phase.PLANNED,
        Phase.PLANNING_WITH_FEEDBACK,
        Phase.READY_FOR_DEPLOYMENT,
        Phase.DEPLOYED,
        Phase.DONE,
        Phase.RESEARCH_DONE,
        Phase.ARCHIVED,
    }
)
_NEWEST = "ORDER BY updated_at DESC, id DESC"


@dataclass(frozen=True)
class Column:
    """A column of the page: its phases' cards the inbox does not list, or (`waits`) the
    cards it lists, whatever their phase; the `limit` most recent."""

    phases: tuple[Phase, ...]
    limit: int
    waits: bool = False


def _walks(column: Column) -> list[str]:
    """The column's LIMITed walks: each reads id and updated_at from an index, and leaves
    out the waiting cards (of its own phase: a few rows to look up, not all of them)."""
    take = f"{_NEWEST} LIMIT {int(column.limit) + 1}"
    if column.waits:
        return [f"SELECT id, updated_at FROM waiting {take}"]
    alone = sorted(p.value for p in set(column.phases) & PILING_UP)
    together = sorted(p.value for p in set(column.phases) - PILING_UP)
    walks = [
        f"SELECT id, updated_at FROM cards WHERE phase = '{phase}' "
        f"AND id NOT IN (SELECT id FROM waiting WHERE phase = '{phase}') {take}"
        for phase in alone
    ]
    if together:
        # Against the whole set: testing each of its rows for a list of phases costs
        # more than looking up a few more ids.
        phases = ", ".join(f"'{phase}'" for phase in together)
        walks.append(
            f"SELECT id, updated_at FROM cards WHERE phase IN ({phases}) "
            f"AND id NOT IN (SELECT id FROM waiting) {take}"
        )
    return walks


def columns_query(page: Sequence[Column]) -> str:
    """The statement (bench/owner_inbox.py --explain shows its plan): rows of
    (column number, COLUMNS...), each column's newest first and at most its limit + 1."""
    parts = []
    for number, column in enumerate(page):
        walks = _walks(column)
        if not walks:
            continue
        # A column of several walks: its newest across them (each wrapped: PostgreSQL
        # takes ORDER BY and LIMIT in a branch of a UNION only in a subquery).
        branches = " UNION ALL ".join(
            f"SELECT * FROM ({walk}) AS w{number}_{i}" for i, walk in enumerate(walks)
        )
        parts.append(
            f"SELECT {number} AS n, {int(column.waits)} AS waits, id FROM ({branches} "
            f"{_NEWEST} LIMIT {int(column.limit) + 1}) AS col{number}"
        )
    picked = " UNION ALL ".join(parts) or "SELECT 0 AS n, 0 AS waits, id FROM cards WHERE 1 = 0"
    # Whether the inbox lists a card is which column found it: the waiting column holds
    # the set, every other column leaves it out.
    return (
        f"WITH waiting AS ({WAITING_CARDS_SQL}) "
        f"SELECT picked.n, {columns('picked.waits = 1')} FROM ({picked}) AS picked "
        f"JOIN cards c ON c.id = picked.id {JOINS} "
        "ORDER BY picked.n, c.updated_at DESC, c.id DESC"
    )


async def board_columns(
    db: Db, page: Sequence[Column], *, deploy_configured: bool = False
) -> list[CardList]:
    """Each column's first page, as card_list gives it (older: where the next starts)."""
    rows = await db.fetchall(columns_query(page), read_params(None, deploy_configured))
    found: list[list[tuple[Any, ...]]] = [[] for _ in page]
    for row in rows:
        found[row[0]].append(tuple(row[1:]))
    lists = []
    for column, mine in zip(page, found, strict=True):
        more = len(mine) > column.limit
        mine = mine[: column.limit]
        # A row of COLUMNS: id first, updated_at seventh.
        older = Cursor(mine[-1][6], mine[-1][0]) if more else None
        lists.append(CardList([board_card(row) for row in mine], older=older))
    return lists
