"""The web board's bounded reads: the most recent cards of some phases, how many
cards each phase holds, and the paged search behind `/cards`.

A board may hold a hundred thousand cards, most of them done. Every read here costs
what it returns, not what the board holds: each phase is read on its own along the
index `cards_phase_recent` (phase, updated_at, id, slug, title) with a LIMIT (every
phase at once: along `cards_updated`, which holds slug and title too), and pages go
on from a cursor (the last card's updated_at and id), never by OFFSET. Only a search
by text reads further (in the index, not the cards' rows), and it stops at a page of
matches.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from chatbot.board.waiting import CANDIDATES_SQL, WAITS_SQL, waits_sql
from chatbot.domain.phases import Kind, Phase, child_success_phases
from chatbot.store import Db

# The longest search text taken (a longer one is refused, not cut).
MAX_QUERY = 100

_COLUMNS = """c.id, c.slug, c.kind, c.title, c.phase, c.lane, c.updated_at,
  (SELECT max(e.at) FROM events e WHERE e.card_id = c.id) AS moved_at,
  j.state AS job_state,
  CASE WHEN j.state = 'running' THEN j.started_at ELSE j.created_at END AS job_since,
  q.text AS question, q.options AS options, c.failure_stage,
  CASE WHEN {waits} THEN 1 ELSE 0 END AS waits,
  CASE WHEN c.phase = 'split' THEN
    (SELECT count(*) FROM cards k WHERE k.parent_id = c.id) ELSE 0 END AS children,
  CASE WHEN c.phase = 'split' THEN
    (SELECT count(*) FROM cards k WHERE k.parent_id = c.id AND k.phase IN ({done}, :also_done))
    ELSE 0 END AS children_done"""
_DONE = ", ".join(f"'{p.value}'" for p in sorted(child_success_phases(True)))


def columns(waits: str) -> str:
    """What a board card reads (`cards c`), `waits` deciding whether the inbox lists it:
    the rule itself (WAITS_SQL), or a cheaper test where the page read the set already."""
    return _COLUMNS.format(waits=waits, done=_DONE)


COLUMNS = columns(WAITS_SQL)
JOINS = """LEFT JOIN jobs j ON j.card_id = c.id AND j.state IN ('queued', 'running')
LEFT JOIN questions q ON q.id = (SELECT min(o.id) FROM questions o
  WHERE o.card_id = c.id AND o.state = 'open')"""
# SQLite's LIKE ignores case (ASCII) as PostgreSQL's ILIKE does; neither needs lower(),
# so the walk reads slug and title from the index alone (cards_phase_recent holds both).
_MATCH = " AND (slug {like} :pattern ESCAPE '\\' OR title {like} :pattern ESCAPE '\\')"


class BoardCard(NamedTuple):
    """What a card on the board shows: no history, no runs; one row of one query.

    A tuple, not a dataclass: a board of ten thousand cards builds ten thousand of
    them per page, and a tuple is built several times faster.
    """

    slug: str
    kind: Kind
    title: str
    phase: Phase
    lane: str | None
    updated_at: float
    # When the card last moved (its last event), for "since 3 h".
    moved_at: float
    job_state: str | None = None
    # When the active job was queued (queued) or started (running).
    job_since: float | None = None
    question: str | None = None
    options: tuple[str, ...] = ()
    # Which run failed (a failed card's buttons on the board depend on it).
    failure_stage: str | None = None
    # The owner's inbox lists it (board/waiting.py): it is under "Waiting for you".
    waits: bool = False
    # A split parent's children, and how many of them are done as its split counts them.
    children: int = 0
    children_done: int = 0


@dataclass(frozen=True)
class Cursor:
    """Where a page of a list ends: the updated_at and id of its last (or first) card."""

    updated_at: float
    id: int

    def token(self) -> str:
        return f"{self.updated_at!r}_{self.id}"

    @classmethod
    def parse(cls, text: str) -> Cursor | None:
        at, _, number = text.partition("_")
        # An id past a 64-bit integer would make PostgreSQL refuse the query.
        if not (number.isascii() and number.isdigit() and len(number) <= 18) or "_" in at:
            return None
        try:
            cursor = cls(float(at), int(number))
        except ValueError:
            return None
        return cursor if math.isfinite(cursor.updated_at) else None


@dataclass(frozen=True)
class CardList:
    """One page of a list, most recently changed first, and where the pages next to it
    start (None: there is none)."""

    cards: list[BoardCard]
    older: Cursor | None = None
    newer: Cursor | None = None


def like_pattern(text: str) -> str:
    """`text` anywhere; its own % and _ (and the escape) match literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


_PHASES = {phase.value: phase for phase in Phase}
_ALL = frozenset(Phase)
_KINDS = {kind.value: kind for kind in Kind}


def board_card(row: tuple[Any, ...]) -> BoardCard:
    """A row of `COLUMNS` (the id first) as the board shows it."""
    _, slug, kind, title, phase, lane, updated, moved, job_state, job_since, *rest = row
    question, options, failure_stage, waits, children, children_done = rest
    return BoardCard(
        slug,
        _KINDS[kind],
        title,
        _PHASES[phase],
        lane,
        updated,
        moved or updated,
        job_state,
        job_since,
        question,
        tuple(json.loads(options)) if options else (),
        failure_stage,
        bool(waits),
        children or 0,
        children_done or 0,
    )


def read_params(now: float | None = None, deploy_configured: bool = False) -> dict[str, object]:
    """What COLUMNS reads with: the time a quota wait is judged at, and whether a split's
    child is done only once deployed (child_success_phases)."""
    also = "" if deploy_configured else Phase.READY_FOR_DEPLOYMENT.value
    return {"now": time.time() if now is None else now, "also_done": also}


def list_query(
    engine: str,
    phases: Sequence[Phase],
    limit: int,
    text: str = "",
    edge: Cursor | None = None,
    backwards: bool = False,
    *,
    waits: bool | None = None,
    now: float | None = None,
    deploy_configured: bool = False,
) -> tuple[str, dict[str, object]]:
    """card_list's query and its parameters (bench/web_board.py --explain shows its plan).

    `waits`: True, only the cards the owner's inbox lists (in any phase: `phases` is not
    asked); False, only the others; None, both."""
    params: dict[str, object] = {"limit": limit + 1, **read_params(now, deploy_configured)}
    where = ""
    if text:
        where += _MATCH.format(like="ILIKE" if engine == "postgresql" else "LIKE")
        params["pattern"] = like_pattern(text)
    if edge is not None:
        where += f" AND (updated_at, id) {'>' if backwards else '<'} (:edge_at, :edge_id)"
        params["edge_at"], params["edge_id"] = edge.updated_at, edge.id
    # Each phase's walk leaves out its waiting cards (waits is False) by the rule for
    # that phase; a walk over every phase by the whole rule.
    leave_out = waits is False
    if leave_out and set(phases) >= _ALL:
        where += f" AND NOT {WAITS_SQL}"
        leave_out = False
    order = "ASC" if backwards else "DESC"
    # One LIMITed index walk per phase: a single walk over several phases would sort them
    # all. Every phase at once is one walk of cards_updated (which holds slug and title).
    branches = []
    if waits:
        # The few cards that may wait, from the indexes that find them, then the rule.
        phases = ()
        branches.append(
            f"SELECT * FROM (SELECT id FROM cards c WHERE c.id IN ({CANDIDATES_SQL}) "
            f"AND {WAITS_SQL}{where} ORDER BY updated_at {order}, id {order} LIMIT :limit) AS w"
        )
    elif set(phases) >= _ALL:
        phases = ()
        branches.append(
            f"SELECT * FROM (SELECT id FROM cards c WHERE 1 = 1{where} "
            f"ORDER BY updated_at {order}, id {order} LIMIT :limit) AS b"
        )
    for i, phase in enumerate(phases):
        params[f"p{i}"] = phase.value
        own = f" AND NOT {waits_sql(phase)}" if leave_out else ""
        branches.append(
            f"SELECT * FROM (SELECT id FROM cards c WHERE phase = :p{i}{where}{own} "
            f"ORDER BY updated_at {order}, id {order} LIMIT :limit) AS b{i}"
        )
    if not branches:
        branches.append("SELECT id FROM cards WHERE 1 = 0")
    sql = (
        f"SELECT {COLUMNS} FROM ({' UNION ALL '.join(branches)}) AS picked "
        f"JOIN cards c ON c.id = picked.id {JOINS} "
        f"ORDER BY c.updated_at {order}, c.id {order} LIMIT :limit"
    )
    return sql, params


async def card_list(
    db: Db,
    phases: Sequence[Phase],
    limit: int,
    *,
    text: str = "",
    after: Cursor | None = None,
    before: Cursor | None = None,
    waits: bool | None = None,
    deploy_configured: bool = False,
) -> CardList:
    """`limit` cards of `phases` whose slug or title holds `text`, most recent first:
    the first ones, those older than `after`, or those newer than `before`; `waits` as
    list_query's."""
    backwards = before is not None
    edge = before if backwards else after
    sql, params = list_query(
        db.engine,
        phases,
        limit,
        text,
        edge,
        backwards,
        waits=waits,
        deploy_configured=deploy_configured,
    )
    rows = await db.fetchall(sql, params)
    more = len(rows) > limit
    rows = rows[:limit]
    if backwards:
        rows.reverse()
    cards = [board_card(row) for row in rows]
    first = Cursor(rows[0][6], rows[0][0]) if rows else None
    last = Cursor(rows[-1][6], rows[-1][0]) if rows else None
    if backwards:
        return CardList(cards, older=last, newer=first if more else None)
    return CardList(cards, older=last if more else None, newer=first if after else None)


async def phase_counts(db: Db) -> dict[Phase, int]:
    """How many cards each phase holds (a walk over the phase index only)."""
    rows = await db.fetchall("SELECT phase, count(*) FROM cards GROUP BY phase")
    return {Phase(phase): count for phase, count in rows}
