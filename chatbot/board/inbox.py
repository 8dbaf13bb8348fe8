"""What waits for an owner (`/inbox`), and what holds one card (`/why`): reads only.

Both return plain records; chat, the CLI and the web board say them in their words.
`inbox` lists every item a person can resolve, oldest first; `why` gathers the
snapshot `domain/why.hold` decides on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chatbot.board.budget import budget_stopped
from chatbot.domain import ways
from chatbot.domain.phases import Phase, child_success_phases
from chatbot.domain.shown import visible
from chatbot.domain.why import Hold, JobSnap, Snapshot, WorkerSnap, commands_for, hold
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.store import talk as talk_store
from chatbot.store import workers as worker_store
from chatbot.store.cards import Card
from chatbot.store.db import Db

if TYPE_CHECKING:
    from chatbot.board.moves import BoardService


class Kind:
    QUESTION = "question"
    SPLIT_PLAN = "split_plan"
    REQUEST = "request"
    BUDGET = "budget"
    APPROVAL = "approval"
    INTERRUPTED = "interrupted"
    DEPLOY = "deploy"
    FAILED = "failed"
    QUOTA = "quota"


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


# The question an operator's split plan waits on (pipeline/planning.py asks it).
SPLIT_PLAN_QUESTION = "split_plan"

# Where a card waits for a person besides a question or a request.
_CARD_PHASES = tuple(p.value for p in (*ways.FAILED_WAYS, Phase.READY_FOR_DEPLOYMENT))


async def inbox(board: BoardService, requester: str | None = None) -> list[InboxItem]:
    """Everything that waits for an owner, oldest first; for `requester` (an identity as
    requests record it), only their own pending requests."""
    db = board.store.reader
    items = [
        InboxItem(
            Kind.REQUEST,
            r.created_at,
            text=f"/{r.command} {r.argument}".rstrip(),
            request_id=r.id,
            requester=r.requester,
            ways=(f"/accept {r.id}", f"/decline {r.id}"),
        )
        for r in await chat_store.pending_requests(db)
        if requester is None or r.requester == requester
    ]
    if requester is not None:
        return sorted(items, key=lambda i: i.at)
    questions = await question_store.all_open(db)
    rows = await db.fetchall(
        "SELECT * FROM run_talk WHERE kind = 'approval' AND state = 'open' ORDER BY id"
    )
    approvals = [talk_store.TalkRow.from_row(row) for row in rows]
    # Runs that met the provider's quota or rate limit: nothing to do but know it.
    now = time.time()
    waiting = await db.fetchall(
        "SELECT card_id, not_before, error, created_at FROM jobs "
        "WHERE state = 'queued' AND not_before > ? ORDER BY id",
        (now,),
    )
    # Only the slugs of these cards: reading every card's costs 0.1 s at 100,000 cards.
    ids = {q.card_id for q in questions} | {talk.card_id for talk in approvals}
    ids |= {row[0] for row in waiting}
    slug_of = await _slugs(db, ids)
    asked = set()
    for q in questions:
        asked.add(q.card_id)
        slug = slug_of.get(q.card_id, "-")
        if q.kind == SPLIT_PLAN_QUESTION:
            planned = ", ".join(await _planned_slugs(board, slug))
            found = ("👍", "/confirm {slug}", "/answer {slug} <reason>")
            items.append(
                InboxItem(Kind.SPLIT_PLAN, q.created_at, slug, planned, ways=_fill(found, slug))
            )
            continue
        found = commands_for((ways.Action.ANSWER,))
        items.append(
            InboxItem(
                Kind.QUESTION,
                q.created_at,
                slug,
                q.text,
                ways=_fill(found, slug),
                options=tuple(q.options),
            )
        )
    for talk in approvals:
        slug = slug_of.get(talk.card_id, "-")
        found = ("👍", "/approve {slug}", "/deny {slug} <reason>")
        items.append(
            InboxItem(
                Kind.APPROVAL, talk.created_at, slug, visible(talk.text), ways=_fill(found, slug)
            )
        )
    for card_id, until, error, created_at in waiting:
        slug = slug_of.get(card_id, "-")
        items.append(
            InboxItem(
                Kind.QUOTA, created_at, slug, error or "", ways=(f"/cancel {slug}",), until=until
            )
        )
    marks = ", ".join("?" * len(_CARD_PHASES))
    # Only the cards that can be items: parsing every approved card's row is most of
    # the cost on a large board.
    rows = await db.fetchall(
        f"SELECT * FROM cards WHERE phase IN ({marks}) "
        "AND (phase <> 'ready_for_deployment' OR deployment_status = 'pending') "
        "AND id NOT IN (SELECT card_id FROM questions WHERE state = 'open')",
        _CARD_PHASES,
    )
    busy = await job_store.active_card_slugs(db)
    for card in (Card.from_row(r) for r in rows):
        if card.id not in asked and card.id not in busy:
            item = _card_item(card)
            if item is not None:
                items.append(item)
    return sorted(items, key=lambda i: (i.at, i.slug or ""))


async def _slugs(db: Db, ids: set[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    wanted = sorted(i for i in ids if i is not None)
    # In chunks: a database takes only so many parameters in one statement.
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = await db.fetchall(f"SELECT id, slug FROM cards WHERE id IN ({marks})", chunk)
        found.update((row[0], row[1]) for row in rows)
    return found


async def _planned_slugs(board: BoardService, slug: str) -> tuple[str, ...]:
    """The children an operator's split plan would create (kept in the card's data)."""
    card = await card_store.get(board.store.reader, slug)
    plan = card.data.get("split_plan") if card is not None else None
    return tuple(str(entry.get("slug")) for entry in plan or () if isinstance(entry, dict))


def _card_item(card: Card) -> InboxItem | None:
    at, slug = card.updated_at, card.slug
    if budget_stopped(card) is not None:
        found = commands_for(ways.BUDGET_WAYS)
        return InboxItem(Kind.BUDGET, at, slug, card.failure_stage or "", ways=_fill(found, slug))
    if card.phase is Phase.INTERRUPTED:
        found = commands_for(ways.FAILED_WAYS[Phase.INTERRUPTED])
        return InboxItem(Kind.INTERRUPTED, at, slug, ways=_fill(found, slug))
    if card.phase is Phase.READY_FOR_DEPLOYMENT:
        if card.deployment_status != "pending":
            return None
        return InboxItem(Kind.DEPLOY, at, slug, ways=(f"/deploy {slug}",))
    actions = ways.ways_forward(card.phase, card.failure_stage)
    if not actions:
        return None
    stage = card.failure_stage or card.phase.value
    return InboxItem(Kind.FAILED, at, slug, stage, ways=_fill(commands_for(actions), slug))


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


async def why(board: BoardService, slug: str, now: float | None = None) -> Why:
    """What holds `slug` first (UnknownCard when there is no such card)."""
    view = await board.view(slug)
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
    snap_job, ahead, spent = None, (), False
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
            day = await board.day_budget(now)
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


async def _ahead(board: BoardService, job: job_store.Job) -> tuple[str, ...]:
    """The lane's jobs before `job`: the running ones, then those queued before it."""
    db = board.store.reader
    slugs = await job_store.active_card_slugs(db)
    lane = [j for j in await job_store.listing(db) if j.lane == job.lane and j.id != job.id]
    running = [j for j in lane if j.state.value == "running"]
    queued = [j for j in lane if j.state.value == "queued" and j.id < job.id]
    return tuple(slugs.get(j.card_id or 0, j.kind) for j in (*running, *queued))
