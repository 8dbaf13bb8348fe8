"""The board seen, not changed: cards with their relations and history, the summary.

Reads use the store's reader connection, so they see committed state only and
never wait for a writer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from chatbot.board.attachments import Attachment
from chatbot.domain.phases import Phase
from chatbot.store import Store, telemetry
from chatbot.store import attachments as attachment_store
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.store.cards import Card, Event
from chatbot.store.chat import Posted, Request, RequestMessage
from chatbot.store.health import StoreHealth
from chatbot.store.jobs import Job
from chatbot.store.questions import QuestionRow
from chatbot.store.telemetry import RunRecord
from runners import diff_files
from runners.diff_files import CommitDiff


@dataclass(frozen=True, slots=True)
class CardView:
    card: Card
    parent: str | None
    children: list[str]
    blocked_by: list[str]
    events: list[Event]
    active_job: Job | None
    open_question: QuestionRow | None = None
    #: Files attached to it, oldest first (dropped ones too: they say so).
    attachments: list[Attachment] = field(default_factory=list)


@dataclass(frozen=True)
class BoardSummary:
    counts: dict[Phase, int]
    active_jobs: list[Job]
    total: int
    open_questions: int = 0
    cards_by_phase: dict[Phase, list[str]] = field(default_factory=dict)


_VIEW_SQL = """
SELECT c.*,
  (SELECT p.slug FROM cards p WHERE p.id = c.parent_id) AS _parent,
  (SELECT json_group_array(slug) FROM
     (SELECT slug FROM cards WHERE parent_id = c.id ORDER BY id) AS k) AS _children,
  (SELECT json_group_array(slug) FROM
     (SELECT b.slug FROM card_dependencies d JOIN cards b ON b.id = d.blocked_by_id
      WHERE d.card_id = c.id ORDER BY b.slug) AS b) AS _blocked,
  (SELECT json_group_array(json_array(seq, from_phase, to_phase, action, actor, reason, at)) FROM
     (SELECT * FROM events WHERE card_id = c.id ORDER BY seq) AS e) AS _events,
  (SELECT id FROM jobs WHERE card_id = c.id AND state IN ('queued', 'running')) AS _job,
  (SELECT min(id) FROM questions WHERE card_id = c.id AND state = 'open') AS _question,
  (SELECT 1 FROM attachments WHERE card_id = c.id LIMIT 1) AS _files
FROM cards c WHERE c.slug = ?
"""


# --- the web board's reads (chatbot/web) ------------------------------------------
# Small additive reads: each is one query on the reader connection, so a page of
# ten thousand cards costs a fixed number of hops to the database thread.


def change_base(card: Card) -> str | None:
    """Where the card's change starts: the parent of its first reviewed commit when that is
    not its last (a fixer built on), else None (the last commit's parent)."""
    reviewed = [entry["commit"] for entry in card.data.reviews]
    first = reviewed[0] if reviewed else None
    if first and first != card.commit_hash and diff_files.is_hash(first):
        return f"{first}^"
    return None


class BoardReads:
    """The board seen (`board.reads`): cards, their views and changes, questions, chat's
    records, runs and jobs."""

    def __init__(self, store: Store, repo: Path):
        self.store = store
        self.repo = repo

    @property
    def store_health(self) -> StoreHealth:
        """Whether the database takes writes now (not on a full disk), since when, and
        the wait until it does again: for the worker, the chat, the web board, check."""
        return self.store.health

    # --- reading --------------------------------------------------------------

    async def card(self, slug: str) -> Card:
        return await card_store.require(self.store.reader, slug)

    async def card_by_id(self, card_id: int) -> Card | None:
        return await card_store.get_by_id(self.store.reader, card_id)

    async def slug_taken(self, slug: str) -> bool:
        return await card_store.get(self.store.reader, slug) is not None

    async def change(self, card: Card) -> CommitDiff | None:
        """The card's change file by file (None: it has no commit yet): from before its
        first reviewed commit (the builder's) to its last, so a fixer's commits count too."""
        if not card.commit_hash:
            return None
        return await diff_files.change_of(self.repo, card.commit_hash, change_base(card))

    def change_key(self, card: Card) -> tuple[str, str | None, str] | None:
        """What decides the card's change: the repository, the base and the commit (None:
        no commit yet). A commit's change never changes: a page may keep it by these."""
        if not card.commit_hash:
            return None
        return str(self.repo), change_base(card), card.commit_hash

    async def patch(self, card: Card) -> tuple[str, bool] | None:
        """The card's whole patch for a download, and whether the size cap cut it."""
        if not card.commit_hash:
            return None
        return await diff_files.patch_of(self.repo, card.commit_hash, change_base(card))

    async def view(self, slug: str) -> CardView:
        """One card with its relations and history in one query: each query is a hop to
        the database thread, and `/status <slug>` is on the chat's hot path."""
        db = self.store.reader
        row = await db.fetchone(_VIEW_SQL, (slug,))
        if row is None:
            raise card_store.UnknownCard(slug)
        values = dict(row)
        extra = {key: values.pop(key) for key in list(values) if key.startswith("_")}
        card = Card.from_row(values)
        events = [
            Event(card.id, seq, Phase(src) if src else None, Phase(dst), action, actor, why, at)
            for seq, src, dst, action, actor, why, at in json.loads(extra["_events"])
        ]
        job = await job_store.get(db, extra["_job"]) if extra["_job"] else None
        question = await question_store.get(db, extra["_question"]) if extra["_question"] else None
        files = await attachment_store.of_card(db, card.id) if extra["_files"] else []
        return CardView(
            card=card,
            parent=extra["_parent"],
            children=json.loads(extra["_children"]),
            blocked_by=json.loads(extra["_blocked"]),
            events=events,
            active_job=job,
            open_question=question,
            attachments=[Attachment.from_row(row) for row in files],
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
        files = await attachment_store.of_cards(db)
        return [
            CardView(
                card=c,
                parent=slug_of.get(c.parent_id) if c.parent_id else None,
                children=children.get(c.id, []),
                blocked_by=sorted(blocked.get(c.id, [])),
                events=history.get(c.id, []),
                active_job=active.get(c.id),
                attachments=[Attachment.from_row(row) for row in files.get(c.id, [])],
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

    async def children_of(self, card_id: int) -> list[Card]:
        return await card_store.children(self.store.reader, card_id)

    async def slugs(self) -> list[str]:
        return await card_store.slugs(self.store.reader)

    async def open_questions(self) -> list[QuestionRow]:
        return await question_store.all_open(self.store.reader)

    # --- what chat needs to know about what it said and was asked --------------------

    async def question(self, question_id: int) -> QuestionRow | None:
        return await question_store.get(self.store.reader, question_id)

    async def posted(self, transport: str, message_id: str) -> Posted | None:
        """What one of the bot's own messages was about (card, question, request)."""
        return await chat_store.posted(self.store.reader, transport, message_id)

    async def request(self, request_id: int) -> Request | None:
        return await chat_store.get_request(self.store.reader, request_id)

    async def pending_requests(self) -> list[Request]:
        return await chat_store.pending_requests(self.store.reader)

    async def request_message(self, request_id: int) -> RequestMessage | None:
        return await chat_store.request_message(self.store.reader, request_id)

    async def runs_of(self, card_id: int, limit: int) -> list[RunRecord]:
        return await telemetry.for_card(self.store.reader, card_id, limit=limit)

    async def pipeline_runs(self, pipeline: str) -> tuple[str, list[tuple[str, RunRecord]]]:
        """The runs of a pipeline, by its id or by a card slug (that card's pipeline):
        (the pipeline id, [(card slug, run), ...] oldest first)."""
        card = await card_store.get(self.store.reader, pipeline)
        if card is not None and card.pipeline_run_id:
            pipeline = card.pipeline_run_id
        return pipeline, await telemetry.for_pipeline(self.store.reader, pipeline)

    async def pipeline_slugs(self, pipeline: str) -> list[str]:
        """The cards a pipeline id (from pipeline_runs) belongs to: a split's parent and
        its children carry the same one."""
        return await card_store.in_pipeline(self.store.reader, pipeline)

    async def active_jobs(self) -> list[Job]:
        return await job_store.listing(self.store.reader)

    async def job_slugs(self) -> dict[int, str]:
        """The slug of each card that has a job queued or running, by card id."""
        return await job_store.active_card_slugs(self.store.reader)
