"""What waits for an owner (`/inbox`), and what holds one card (`/why`): reads only.

Both return plain records; chat, the CLI and the web board say them in their words.
`inbox` lists every item a person can resolve, oldest first; `why` gathers the
snapshot `domain/why.hold` decides on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from chatbot.board.budget import budget_stopped
from chatbot.domain import ways
from chatbot.domain.phases import Phase, child_success_phases
from chatbot.domain.shown import visible
from chatbot.domain.why import Hold, JobSnap, Snapshot, WorkerSnap, commands_for, hold
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.store import routines as routine_store
from chatbot.store import talk as talk_store
from chatbot.store import workers as worker_store
from chatbot.store.cards import Card
from chatbot.store.db import Db, Row

if TYPE_CHECKING:
    from chatbot.board.ports import InboxSource


class InboxKind:
    QUESTION = "question"
    SPLIT_PLAN = "split_plan"
    REQUEST = "request"
    BUDGET = "budget"
    APPROVAL = "approval"
    INTERRUPTED = "interrupted"
    DEPLOY = "deploy"
    FAILED = "failed"
    QUOTA = "quota"
    ROUTINE = "routine"
    PROPOSAL = "proposal"


@dataclass(frozen=True)
class InboxItem:
    kind: str
    #: Since when it waits (when it was asked, requested, or the card got there).
    at: float
    slug: str | None = None
    #: What was asked or requested, or the failure's stage.
    text: str = ""
    request_id: int | None = None
    requester: str | None = None
    #: The commands that resolve it, "/" written, "{slug}" filled.
    ways: tuple[str, ...] = ()
    #: When it moves on by itself (a quota wait's reset time).
    until: float | None = None
    #: A question's options, as offered (the web board makes them buttons).
    options: tuple[str, ...] = ()
    #: A working agent's question's row: its card may have a few open, and an option
    #: button answers the one it was shown with.
    question_id: int | None = None


# The question an operator's split plan waits on (pipeline/planning.py asks it).
SPLIT_PLAN_QUESTION = "split_plan"

# Where a card waits for a person besides a question or a request.
_CARD_PHASES = tuple(p.value for p in (*ways.FAILED_WAYS, Phase.READY_FOR_DEPLOYMENT))


@dataclass(frozen=True)
class InboxPage:
    """The first items of the inbox, oldest first, and how many there are in all."""

    items: list[InboxItem]
    count: int


async def inbox(board: InboxSource, requester: str | None = None) -> list[InboxItem]:
    """Everything that waits for an owner, oldest first; for `requester` (an identity as
    requests record it), only their own pending requests."""
    if requester is None:
        return (await inbox_page(board)).items
    db = board.store.reader
    own = [r for r in await chat_store.pending_requests(db) if r.requester == requester]
    return sorted(map(_request_item, own), key=lambda i: i.at)


class _Source(NamedTuple):
    """Where one kind of item is read: `where` makes a row of `table` (as `alias`) an
    item, its column `at` is the item's time; a card's slug is `joined` in ("-" without
    one) to the rows read, not to count them."""

    table: str
    alias: str
    at: str
    where: str
    joined: str = ""


_REQUESTS = _Source("requests", "r", "created_at", "r.state = 'pending'")
_QUESTIONS = _Source(
    "questions", "q", "created_at", "q.state = 'open'", "LEFT JOIN cards c ON c.id = q.card_id"
)
_APPROVALS = _Source(
    "run_talk",
    "t",
    "created_at",
    "t.kind = 'approval' AND t.state = 'open'",
    "LEFT JOIN cards c ON c.id = t.card_id",
)
# Follow-up cards working agents proposed, nothing made until an owner says so.
_PROPOSALS = _Source(
    "proposals", "p", "created_at", "p.state = 'pending'", "LEFT JOIN cards c ON c.id = p.card_id"
)
# Runs that met the provider's quota or rate limit: nothing to do but know it.
_QUOTA = _Source(
    "jobs",
    "j",
    "created_at",
    "j.state = 'queued' AND j.not_before > :now",
    "LEFT JOIN cards c ON c.id = j.card_id",
)
# The cards that wait for a person themselves: a failure's ways, a deployment; never
# one a question or a queued or running job holds.
_CARD_WHERE = (
    "c.phase IN ({phases}) "
    "AND (c.phase <> 'ready_for_deployment' OR c.deployment_status = 'pending') "
    "AND c.id NOT IN (SELECT card_id FROM questions WHERE state = 'open') "
    "AND c.id NOT IN (SELECT card_id FROM jobs "
    "WHERE state IN ('queued', 'running') AND card_id IS NOT NULL)"
).format(phases=", ".join(f"'{phase}'" for phase in sorted(set(_CARD_PHASES))))
# A card waiting for a person that nothing failed for (an operator's question, which
# has its own item): an item only when its budget stopped it, which its data says.
_QUIET = "c.phase = 'needs_human' AND (c.failure_stage IS NULL OR c.failure_stage <> 'operator')"
_CARDS = _Source("cards", "c", "updated_at", f"{_CARD_WHERE} AND NOT ({_QUIET})")
_MAYBE_CARDS = _Source("cards", "c", "updated_at", f"{_CARD_WHERE} AND {_QUIET}")
_COUNT_SQL = "SELECT " + ", ".join(
    f"(SELECT count(*) FROM {kind.table} {kind.alias} WHERE {kind.where})"
    for kind in (_REQUESTS, _QUESTIONS, _APPROVALS, _QUOTA, _CARDS, _PROPOSALS)
)


async def inbox_page(board: InboxSource, limit: int | None = None) -> InboxPage:
    """The oldest `limit` items of the inbox (all of them: None) and their count in all.

    Each kind reads only its oldest `limit` rows (and those tied in time with the last,
    which a slug may sort first), so a page that shows 50 of 2,000 items reads about 50
    of each kind and counts the rest in one query. The reads go together (fetch_many):
    on PostgreSQL one round trip for all of them, not one per kind."""
    db = board.store.reader
    now = {"now": time.time()}
    slug = "COALESCE(c.slug, '-') AS _slug"
    quota = f"j.not_before, j.error, j.created_at, {slug}"
    kinds: list[tuple[_Source, str, int | None, dict[str, float]]] = [
        (_REQUESTS, "r.*", limit, {}),
        (_QUESTIONS, f"q.*, {slug}", limit, {}),
        (_APPROVALS, f"t.*, {slug}", limit, {}),
        (_QUOTA, quota, limit, now),
        (_CARDS, "c.*", limit, {}),
        (_PROPOSALS, f"p.*, {slug}", limit, {}),
        # Normally none: read whole, as whether one is an item is in its data.
        (_MAYBE_CARDS, "c.*", None, {}),
    ]
    reads = [_oldest(source, columns, most, params) for source, columns, most, params in kinds]
    if limit is not None:
        reads.append((_COUNT_SQL, now))
    results = await db.fetch_many(reads)
    requests, questions, approvals, waiting, cards, proposed, quiet = [
        await _kept(db, kind, rows) for kind, rows in zip(kinds, results, strict=False)
    ]
    counted = results[-1][0] if limit is not None else None
    maybe = [_card_item(Card.from_row(row)) for row in quiet]
    items = [_request_item(chat_store.Request(**row)) for row in requests]
    for row in questions:
        slug = row.pop("_slug")
        items.append(await _question_item(board, question_store.QuestionRow.from_row(row), slug))
    for row in approvals:
        slug = row.pop("_slug")
        found = ("👍", "/approve {slug}", "/deny {slug} <reason>")
        text = visible(row["text"])
        items.append(
            InboxItem(InboxKind.APPROVAL, row["created_at"], slug, text, ways=_fill(found, slug))
        )
    for row in waiting:
        slug = row["_slug"]
        items.append(
            InboxItem(
                InboxKind.QUOTA,
                row["created_at"],
                slug,
                row["error"] or "",
                ways=(f"/cancel {slug}",),
                until=row["not_before"],
            )
        )
    items += (item for item in map(_card_item, map(Card.from_row, cards)) if item is not None)
    items += (_proposal_item(row) for row in proposed)
    items += (item for item in maybe if item is not None)
    # Routines that paused themselves (normally none): read whole.
    routines = await _routine_items(db)
    items += routines
    items.sort(key=lambda i: (i.at, i.slug or ""))
    if counted is None or all(
        len(rows) < (limit or 0)
        for rows in (requests, questions, approvals, waiting, cards, proposed)
    ):
        return InboxPage(items[:limit], len(items))  # every item was read
    total = sum(counted) + sum(item is not None for item in maybe) + len(routines)
    return InboxPage(items[:limit], total)


def _found(source: _Source) -> str:
    """Every row of the kind, with its time as `_at`."""
    x, at = source.alias, f"{source.alias}.{source.at}"
    return f"SELECT {x}.*, {at} AS _at FROM {source.table} {x} WHERE {source.where}"


def _joined(source: _Source, columns: str, rows: str) -> str:
    """`rows` (a _found) with the slug joined to them, not to every row of the kind."""
    x = source.alias
    return f"SELECT {columns}, {x}._at FROM ({rows}) {x} {source.joined} ORDER BY {x}._at, {x}.id"


def _oldest(
    source: _Source, columns: str, limit: int | None, params: dict[str, float]
) -> tuple[str, dict[str, Any]]:
    """The read of one kind's rows, oldest first (then by id): the oldest `limit` and one
    more (whether rows after the last share its time: _kept), or all of them (None)."""
    if limit is None:
        return _joined(source, columns, _found(source)), params
    # `+ 0`: the few rows `where` finds are sorted, never found by walking an index of
    # the time over the whole table (PostgreSQL would, at 100,000 cards, if the
    # waiting ones are recent).
    order = f" ORDER BY {source.alias}.{source.at} + 0, {source.alias}.id"
    rows = f"{_found(source)}{order} LIMIT :limit"
    return _joined(source, columns, rows), {**params, "limit": limit + 1}


async def _kept(
    db: Db, kind: tuple[_Source, str, int | None, dict[str, float]], rows: list[Row]
) -> list[dict[str, Any]]:
    """The rows of `kind`'s _oldest read cut at its limit, every row tied in time with
    the last kept (read again when the one past the limit ties: rare)."""
    source, columns, limit, params = kind
    if limit is not None and len(rows) > limit:
        last = rows[limit - 1]["_at"]
        rows, after = rows[:limit], rows[limit]
        if after["_at"] == last:
            rows = [row for row in rows if row["_at"] != last]
            tied = f"{_found(source)} AND {source.alias}.{source.at} = :last"
            rows += await db.fetchall(_joined(source, columns, tied), {**params, "last": last})
    kept = [dict(row) for row in rows]
    for values in kept:
        del values["_at"]
    return kept


async def _routine_items(db: Db) -> list[InboxItem]:
    """A routine that paused itself (its last runs failed, its budget was spent) waits
    for an owner; one an owner paused does not."""
    rows = await routine_store.paused_themselves(db)
    return [
        InboxItem(
            InboxKind.ROUTINE,
            at,
            text=f"#{routine_id} {command}: {why}",
            ways=(f"/routine resume {routine_id}", f"/routine delete {routine_id}"),
        )
        for routine_id, command, why, at in rows
    ]


def _proposal_item(row: dict[str, Any]) -> InboxItem:
    """A working agent's proposal: its name, the card it would make, its title (inert:
    the agent's words), and the owner's two ways."""
    name = f"proposal-{row['id']}"
    title = visible(row["title"]).replace("@", "@\u200b")
    return InboxItem(
        InboxKind.PROPOSAL,
        row["created_at"],
        row["_slug"],
        f"{name} ({row['slug']}): {title}",
        ways=(f"/confirm {name}", f"/cancel {name}"),
    )


def _request_item(r: chat_store.Request) -> InboxItem:
    return InboxItem(
        InboxKind.REQUEST,
        r.created_at,
        text=f"/{r.command} {r.argument}".rstrip(),
        request_id=r.id,
        requester=r.requester,
        ways=(f"/accept {r.id}", f"/decline {r.id}"),
    )


async def _question_item(board: InboxSource, q: question_store.QuestionRow, slug: str) -> InboxItem:
    if q.kind == SPLIT_PLAN_QUESTION:
        planned = ", ".join(await _planned_slugs(board, slug))
        found: tuple[str, ...] = ("👍", "/confirm {slug}", "/answer {slug} <reason>")
        return InboxItem(InboxKind.SPLIT_PLAN, q.created_at, slug, planned, ways=_fill(found, slug))
    found = commands_for((ways.Action.ANSWER,))
    text = q.text
    if q.kind == question_store.AGENT:
        # A working agent's words, said in chat too: no invisible characters, no mention.
        text = visible(text).replace("@", "@\u200b")
    return InboxItem(
        InboxKind.QUESTION,
        q.created_at,
        slug,
        text,
        ways=_fill(found, slug),
        options=tuple(q.options),
        question_id=q.id if q.kind == question_store.AGENT else None,
    )


async def _planned_slugs(board: InboxSource, slug: str) -> tuple[str, ...]:
    """The children an operator's split plan would create (kept in the card's data)."""
    card = await card_store.get(board.store.reader, slug)
    plan = card.data.split_plan if card is not None else []
    return tuple(entry["slug"] for entry in plan)


def _card_item(card: Card) -> InboxItem | None:
    at, slug = card.updated_at, card.slug
    if budget_stopped(card) is not None:
        found = commands_for(ways.BUDGET_WAYS)
        return InboxItem(
            InboxKind.BUDGET, at, slug, card.failure_stage or "", ways=_fill(found, slug)
        )
    if card.phase is Phase.INTERRUPTED:
        found = commands_for(ways.FAILED_WAYS[Phase.INTERRUPTED])
        return InboxItem(InboxKind.INTERRUPTED, at, slug, ways=_fill(found, slug))
    if card.phase is Phase.READY_FOR_DEPLOYMENT:
        if card.deployment_status != "pending":
            return None
        return InboxItem(InboxKind.DEPLOY, at, slug, ways=(f"/deploy {slug}",))
    actions = ways.ways_forward(card.phase, card.failure_stage)
    if not actions:
        return None
    stage = card.failure_stage or card.phase.value
    return InboxItem(InboxKind.FAILED, at, slug, stage, ways=_fill(commands_for(actions), slug))


def _fill(found: tuple[str, ...], slug: str) -> tuple[str, ...]:
    return tuple(way.replace("{slug}", slug) for way in found)


@dataclass(frozen=True)
class Why:
    slug: str
    phase: Phase
    hold: Hold

    @property
    def ways(self) -> tuple[str, ...]:
        return _fill(self.hold.ways, self.slug)


async def why(board: InboxSource, slug: str, now: float | None = None) -> Why:
    """What holds `slug` first (UnknownCard when there is no such card)."""
    view = await board.reads.view(slug)
    card, db = view.card, board.store.reader
    now = time.time() if now is None else now
    done = child_success_phases(board.deploy_configured)
    children = tuple(
        (c.slug, c.phase) for c in await card_store.children(db, card.id) if c.phase not in done
    )
    blockers = []
    for other in view.blocked_by:
        found = await card_store.get(db, other)
        if found is not None and found.phase not in done:
            blockers.append((found.slug, found.phase))
    approvals = await talk_store.open_approvals(db, card.id)
    job = view.active_job
    ahead: tuple[str, ...] = ()
    snap_job, spent = None, False
    if job is not None:
        snap_job = JobSnap(
            job.id,
            job.kind,
            job.lane,
            job.state.value,
            job.created_at,
            job.lease_owner,
            job.lease_expires_at,
            job.host,
            job.started_at,
            job.not_before,
            job.error,
            job_store.requeued_when_orphaned(job),
        )
        if job.state.value == "queued":
            ahead = await _ahead(board, job)
            day = await board.budget.day(now)
            spent = day is not None and day.reached
    workers = tuple(
        WorkerSnap(w.id, w.host, tuple(w.lanes), w.heartbeat_at, w.expires_at)
        for w in await worker_store.seen_since(db, 0.0)
    )
    snapshot = Snapshot(
        slug=card.slug,
        phase=card.phase,
        now=now,
        failure_stage=card.failure_stage,
        budget_stopped=budget_stopped(card) is not None,
        deploy_pending=card.deployment_status == "pending",
        blockers=tuple(blockers),
        children=children,
        question_at=view.open_question.created_at if view.open_question else None,
        approval_at=approvals[0].created_at if approvals else None,
        job=snap_job,
        ahead=ahead,
        workers=workers,
        day_budget_spent=spent,
        split_plan=(
            await _planned_slugs(board, card.slug) if card.phase is Phase.SPLIT_PLAN_WAITING else ()
        ),
        kind=card.kind,
    )
    return Why(card.slug, card.phase, hold(snapshot))


async def _ahead(board: InboxSource, job: job_store.Job) -> tuple[str, ...]:
    """The lane's jobs before `job`: the running ones, then those queued before it."""
    db = board.store.reader
    slugs = await job_store.active_card_slugs(db)
    lane = [j for j in await job_store.listing(db) if j.lane == job.lane and j.id != job.id]
    running = [j for j in lane if j.state.value == "running"]
    queued = [j for j in lane if j.state.value == "queued" and j.id < job.id]
    return tuple(slugs.get(j.card_id or 0, j.kind) for j in (*running, *queued))
