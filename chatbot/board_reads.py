"""The board seen, not changed: cards with their relations and history, the summary.

Reads use the store's reader connection, so they see committed state only and
never wait for a writer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chatbot.domain.phases import Phase
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.store.cards import Card, Event
from chatbot.store.jobs import Job
from chatbot.store.questions import QuestionRow


@dataclass(frozen=True)
class CardView:
    card: Card
    parent: str | None
    children: list[str]
    blocked_by: list[str]
    events: list[Event]
    active_job: Job | None
    open_question: QuestionRow | None = None


@dataclass(frozen=True)
class BoardSummary:
    counts: dict[Phase, int]
    active_jobs: list[Job]
    total: int
    open_questions: int = 0
    cards_by_phase: dict[Phase, list[str]] = field(default_factory=dict)


class BoardReads:
    store: Store

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
            open_question=await question_store.open_for_card(db, card.id),
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
            open_questions=len(await question_store.all_open(db)),
            cards_by_phase=by_phase,
        )

    async def slugs(self) -> list[str]:
        return await card_store.slugs(self.store.reader)

    async def open_questions(self) -> list[QuestionRow]:
        return await question_store.all_open(self.store.reader)
