"""The board service: the application core every front end (chat, CLI) talks to.

It knows cards, phases and jobs; it knows nothing of XMPP, Matrix or the console.
Each public method is one transaction: the card's move, its event and the job it
queues land together or not at all.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatbot import importer
from chatbot.domain.phases import Phase
from chatbot.domain.runs import DEPLOY_JOB, ROLE_FOR_PHASE, job_lane
from chatbot.domain.transitions import FAILURE_ACTION, Action, By
from chatbot.store import Db, Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from chatbot.store.cards import Card, Event, UnknownCard
from chatbot.store.jobs import Job

log = logging.getLogger(__name__)

SYSTEM_ACTOR = "system"


class BoardError(Exception):
    """A request the board refuses; the message is meant for the person who asked."""


@dataclass(frozen=True)
class CardView:
    card: Card
    parent: str | None
    children: list[str]
    blocked_by: list[str]
    events: list[Event]
    active_job: Job | None


@dataclass(frozen=True)
class BoardSummary:
    counts: dict[Phase, int]
    active_jobs: list[Job]
    total: int
    cards_by_phase: dict[Phase, list[str]] = field(default_factory=dict)


class BoardService:
    def __init__(self, store: Store, repo: Path, *, default_lane: str = "light"):
        self.store = store
        self.repo = repo
        self.default_lane = default_lane

    # --- reading --------------------------------------------------------------

    async def card(self, slug: str) -> Card:
        return await card_store.require(self.store.reader, slug)

    async def view(self, slug: str) -> CardView:
        db = self.store.reader
        card = await card_store.require(db, slug)
        parent = await card_store.get_by_id(db, card.parent_id) if card.parent_id else None
        return CardView(
            card=card,
            parent=parent.slug if parent else None,
            children=[c.slug for c in await card_store.children(db, card.id)],
            blocked_by=await card_store.blocked_by(db, card.id),
            events=await card_store.events(db, card.id),
            active_job=await job_store.active_for_card(db, card.id),
        )

    async def all_views(self) -> list[CardView]:
        """Every card with its relations and history, in a fixed number of queries."""
        db = self.store.reader
        cards = await card_store.all_cards(db)
        slug_of = {c.id: c.slug for c in cards}
        children: dict[int, list[str]] = {}
        for c in cards:
            if c.parent_id is not None:
                children.setdefault(c.parent_id, []).append(c.slug)
        blocked: dict[int, list[str]] = {}
        for row in await db.fetchall("SELECT card_id, blocked_by_id FROM card_dependencies"):
            blocked.setdefault(row[0], []).append(slug_of[row[1]])
        history: dict[int, list[Event]] = {}
        for row in await db.fetchall("SELECT * FROM events ORDER BY card_id, seq"):
            history.setdefault(row["card_id"], []).append(Event.from_row(row))
        active = {j.card_id: j for j in await job_store.listing(db)}
        return [
            CardView(
                card=c,
                parent=slug_of.get(c.parent_id) if c.parent_id else None,
                children=children.get(c.id, []),
                blocked_by=sorted(blocked.get(c.id, [])),
                events=history.get(c.id, []),
                active_job=active.get(c.id),
            )
            for c in cards
        ]

    async def summary(self, *, with_slugs: bool = False) -> BoardSummary:
        db = self.store.reader
        counts = await card_store.count_by_phase(db)
        by_phase: dict[Phase, list[str]] = {}
        if with_slugs:
            for row in await db.fetchall("SELECT slug, phase FROM cards ORDER BY slug"):
                by_phase.setdefault(Phase(row[1]), []).append(row[0])
        return BoardSummary(
            counts=counts,
            active_jobs=await job_store.listing(db),
            total=sum(counts.values()),
            cards_by_phase=by_phase,
        )

    async def slugs(self) -> list[str]:
        return await card_store.slugs(self.store.reader)

    # --- importing ------------------------------------------------------------

    async def import_cards(self) -> importer.ImportReport:
        files, rejected = importer.scan(self.repo)
        report = importer.ImportReport(rejected=list(rejected))
        async with self.store.transaction() as db:
            await importer.import_files(db, files, report)
        for path, why in report.rejected:
            log.warning("not imported: %s: %s", path, why)
        return report

    # --- acting ---------------------------------------------------------------

    async def act(self, slug: str, action: Action, *, actor: str, reason: str = "") -> Card:
        """An owner's action. Authority is checked by the caller; legality here."""
        async with self.store.transaction() as db:
            card = await card_store.transition(
                db, slug, action, actor=actor, by=By.OWNER, reason=reason
            )
            if action is Action.CANCEL:
                active = await job_store.active_for_card(db, card.id)
                if active is not None:
                    await job_store.cancel(db, active.id, f"cancelled by {actor}")
            elif action is Action.DEPLOY:
                await self._queue_deploy(db, card)
            else:
                await self._queue_run(db, card)
            return card

    async def apply(self, slug: str, action: Action, *, reason: str = "", **changes: Any) -> Card:
        """A system action: the worker applying a validated result."""
        async with self.store.transaction() as db:
            card = await card_store.transition(
                db, slug, action, actor=SYSTEM_ACTOR, by=By.SYSTEM, reason=reason, **changes
            )
            await self._queue_run(db, card)
            return card

    async def _queue_run(self, db: Db, card: Card) -> Job | None:
        role = ROLE_FOR_PHASE.get(card.phase)
        if role is None:
            return None
        job, _ = await job_store.enqueue(
            db,
            kind=role,
            lane=job_lane(role, card.lane, self.default_lane),
            card_id=card.id,
            payload={"phase": card.phase.value, "version": card.version},
        )
        return job

    async def _queue_deploy(self, db: Db, card: Card) -> Job:
        if not card.commit_hash:
            raise BoardError(f"card '{card.slug}' has no reviewed commit to deploy")
        job, created = await job_store.enqueue(
            db,
            kind=DEPLOY_JOB,
            lane=DEPLOY_JOB,
            card_id=card.id,
            payload={"commit": card.commit_hash},
            idempotency_key=f"{card.slug}:{card.commit_hash}",
        )
        if not created:
            log.info("deploy of %s at %s was requested before", card.slug, card.commit_hash)
        return job

    # --- recovery -------------------------------------------------------------

    async def recover(self, instance_id: str) -> list[job_store.Recovered]:
        """At start: orphaned runs go back to the queue or fail their card clearly."""
        async with self.store.transaction() as db:
            recovered = await job_store.recover(db, orphaned_owner_not=instance_id)
            for item in recovered:
                if item.requeued or item.job.card_id is None:
                    continue
                card = await card_store.get_by_id(db, item.job.card_id)
                if card is None or card.phase not in FAILURE_ACTION:
                    continue
                await card_store.transition(
                    db,
                    card.slug,
                    FAILURE_ACTION[card.phase],
                    actor=SYSTEM_ACTOR,
                    by=By.SYSTEM,
                    reason=item.reason,
                    failure_stage=_stage_of(item.job.kind),
                    failure_detail=item.reason,
                )
        for item in recovered:
            log.warning("recovered job %s (%s): %s", item.job.id, item.job.kind, item.reason)
        return recovered


def _stage_of(job_kind: str) -> str:
    return {
        "operator": "operator",
        "builder": "builder",
        "fixer": "builder",
        "reviewer": "review",
        "deploy": "deploy",
        "planner": "split",
    }.get(job_kind, "worker")


def closest_slugs(wanted: str, known: Sequence[str], limit: int = 3) -> list[str]:
    return difflib.get_close_matches(wanted, list(known), n=limit, cutoff=0.5)


__all__ = [
    "BoardError",
    "BoardService",
    "BoardSummary",
    "CardView",
    "UnknownCard",
    "closest_slugs",
]
