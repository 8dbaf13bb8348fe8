"""The board's reads for the web board: its columns and `/cards` (card_lists.py), what
changed since a mark (the live pages' server-sent events), runs per day, the queue's health, the
workers seen, and report files of the repository (never outside it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, astuple, dataclass, fields
from pathlib import Path
from typing import Any

from chatbot.board import board_columns, card_lists, waiting
from chatbot.board.board_columns import Column
from chatbot.board.card_lists import COLUMNS, JOINS, BoardCard, CardList, Cursor, board_card
from chatbot.domain.phases import Phase, child_success_phases
from chatbot.store import Store, telemetry
from chatbot.store import jobs as job_store
from chatbot.store import talk as talk_store
from chatbot.store import workers as worker_store
from chatbot.store.jobs import Job
from chatbot.store.talk import TalkRow
from chatbot.store.telemetry import RunRecord
from chatbot.store.workers import WorkerRow

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "BoardCard",
]

# A worker process as the runs page lists it: host, lanes, heartbeat, alive or gone.
WorkerLine = WorkerRow


@dataclass(frozen=True)
class ChangeMark:
    """How far a reader has seen the board: the newest row of everything a page shows.

    It is made of database values only, so it means the same after the bot
    restarted: a page that reconnects with its last mark is told exactly what it
    missed. Fields are compared with `>`; a value taken again is harmless.
    """

    event_id: int = 0
    card_updated: float = 0.0
    question_id: int = 0
    question_answered: float = 0.0
    job_id: int = 0
    job_started: float = 0.0
    job_finished: float = 0.0
    run_id: int = 0
    # What an agent asked, and requesters' requests: what waits for an owner changes. An
    # approval answered is not here (no index finds it): its card shows it when it moves.
    talk_id: int = 0
    request_id: int = 0
    request_decided: float = 0.0

    def token(self) -> str:
        return ":".join(repr(value) for value in astuple(self))

    @classmethod
    def parse(cls, text: str) -> ChangeMark | None:
        parts = text.split(":")
        if len(parts) != len(fields(cls)):
            return None
        try:
            # Each field's own type (int or float), which mypy cannot follow per field.
            values: list[Any] = [
                (int if f.type in ("int", int) else float)(part)
                for f, part in zip(fields(cls), parts, strict=True)
            ]
        except ValueError:
            return None
        if not all(math.isfinite(value) for value in values):
            return None  # nan compares false with everything: nothing would ever be new
        return cls(*values)

    def jobs_differ(self, other: ChangeMark) -> bool:
        mine = (self.job_id, self.job_started, self.job_finished, self.run_id)
        return mine != (other.job_id, other.job_started, other.job_finished, other.run_id)

    def requests_differ(self, other: ChangeMark) -> bool:
        mine = (self.request_id, self.request_decided)
        return mine != (other.request_id, other.request_decided)


@dataclass(frozen=True)
class JobLine:
    job: Job
    slug: str | None


@dataclass(frozen=True)
class DayRuns:
    day: str  # YYYY-MM-DD, local time
    runs: int
    cost_usd: float


@dataclass(frozen=True)
class QueueHealth:
    queued: int
    running: int
    oldest_queued_at: float | None


# What changed since a mark, as one set of ids: each branch walks an index from the
# mark on, so a live update costs what changed, not what the board holds.
_CHANGED_SQL = f"""
SELECT {COLUMNS} FROM cards c {JOINS}
WHERE c.id IN (
  SELECT id FROM cards WHERE updated_at > :card_updated
  UNION SELECT card_id FROM events WHERE id > :event_id
  UNION SELECT card_id FROM questions WHERE id > :question_id
  UNION SELECT card_id FROM questions WHERE answered_at > :question_answered
  UNION SELECT card_id FROM jobs WHERE id > :job_id
  UNION SELECT card_id FROM jobs WHERE started_at > :job_started
  UNION SELECT card_id FROM jobs WHERE finished_at > :job_finished
  UNION SELECT card_id FROM telemetry WHERE id > :run_id
  UNION SELECT card_id FROM run_talk WHERE id > :talk_id)
ORDER BY c.updated_at DESC, c.id DESC
"""

# Each from an index but the last: requests are few (requesters ask, owners decide).
_MARK_SQL = """
SELECT (SELECT coalesce(max(id), 0) FROM events),
       (SELECT coalesce(max(updated_at), 0.0) FROM cards),
       (SELECT coalesce(max(id), 0) FROM questions),
       (SELECT coalesce(max(answered_at), 0.0) FROM questions),
       (SELECT coalesce(max(id), 0) FROM jobs),
       (SELECT coalesce(max(started_at), 0.0) FROM jobs),
       (SELECT coalesce(max(finished_at), 0.0) FROM jobs),
       (SELECT coalesce(max(id), 0) FROM telemetry),
       (SELECT coalesce(max(id), 0) FROM run_talk),
       (SELECT coalesce(max(id), 0) FROM requests),
       (SELECT coalesce(max(decided_at), 0.0) FROM requests)
"""


class WebReads:
    """Reads for the web board (`board.web`): its columns and lists, what changed since a
    mark, runs, workers and the queue's health, report files."""

    def __init__(self, store: Store, repo: Path, *, deploy_configured: bool = False):
        self.store = store
        self.repo = repo
        # Whether a split's child is done only once deployed.
        self.deploy_configured = deploy_configured

    async def changed_cards(self, since: ChangeMark) -> list[BoardCard]:
        """The cards that changed after `since`, most recently changed first."""
        params = {**asdict(since), **card_lists.read_params(None, self.deploy_configured)}
        rows = await self.store.reader.fetchall(_CHANGED_SQL, params)
        return [board_card(row) for row in rows]

    async def card_list(
        self,
        phases: Sequence[Phase],
        limit: int,
        *,
        text: str = "",
        after: Cursor | None = None,
        before: Cursor | None = None,
        waits: bool | None = None,
    ) -> CardList:
        """A page of the cards in `phases` whose slug or title holds `text`; `waits`: only
        those the owner's inbox lists (True), only the others (False)."""
        return await card_lists.card_list(
            self.store.reader,
            phases,
            limit,
            text=text,
            after=after,
            before=before,
            waits=waits,
            deploy_configured=self.deploy_configured,
        )

    async def board_columns(self, page: Sequence[Column]) -> list[CardList]:
        """The first cards of each of the page's columns, in one statement."""
        return await board_columns.board_columns(
            self.store.reader, page, deploy_configured=self.deploy_configured
        )

    async def phase_counts(self) -> dict[Phase, int]:
        return await card_lists.phase_counts(self.store.reader)

    async def waiting_counts(self, now: float | None = None) -> tuple[dict[Phase, int], int]:
        """The cards per phase the owner's inbox lists, and how many items it lists."""
        now = time.time() if now is None else now
        db = self.store.reader
        return await waiting.waiting_phases(db, now), await waiting.inbox_count(db, now)

    async def change_mark(self) -> ChangeMark:
        row = await self.store.reader.fetchone(_MARK_SQL)
        assert row is not None
        return ChangeMark(*row)

    async def split_progress(self, card_id: int) -> tuple[int, int]:
        """A split parent's children that are done as its split counts them, and all."""
        done = child_success_phases(self.deploy_configured)
        rows = await self.store.reader.fetchall(
            "SELECT phase FROM cards WHERE parent_id = ?", (card_id,)
        )
        return sum(Phase(row[0]) in done for row in rows), len(rows)

    async def talk_of(self, card_id: int, limit: int = 20) -> list[TalkRow]:
        """What the card's agents were told and asked, newest first."""
        return await talk_store.for_card(self.store.reader, card_id, limit)

    async def card_runs(self, card_id: int, limit: int = 50) -> list[RunRecord]:
        return await telemetry.for_card(self.store.reader, card_id, limit=limit)

    async def runs_per_day(self, days: int, now: float | None = None) -> list[DayRuns]:
        """Runs and their cost per local day, for the last `days` days (days without runs
        are left out; the caller lays out the axis)."""
        since = (time.time() if now is None else now) - days * 86400
        # Grouped here, not in SQL: "local day" is the bot's time zone, which SQLite
        # and PostgreSQL would each spell (and know) differently.
        rows = await self.store.reader.fetchall(
            "SELECT created_at, cost_usd FROM telemetry WHERE created_at >= ? ORDER BY id",
            (since,),
        )
        per_day: dict[str, list[float]] = {}
        for created_at, cost in rows:
            day = time.strftime("%Y-%m-%d", time.localtime(created_at))
            runs = per_day.setdefault(day, [0, 0.0])
            runs[0] += 1
            runs[1] += cost or 0.0
        return [DayRuns(day, int(n), cost) for day, (n, cost) in sorted(per_day.items())]

    async def job_lines(self) -> list[JobLine]:
        """Queued and running jobs with their card's slug."""
        db = self.store.reader
        jobs = await job_store.listing(db)
        rows = await db.fetchall(
            "SELECT j.id, c.slug FROM jobs j JOIN cards c ON c.id = j.card_id "
            "WHERE j.state IN ('queued', 'running')"
        )
        slug_of = {row[0]: row[1] for row in rows}
        return [JobLine(job, slug_of.get(job.id)) for job in jobs]

    async def workers_seen(self, since: float) -> list[WorkerLine]:
        """The worker processes whose heartbeat came after `since`, on every host."""
        return await worker_store.seen_since(self.store.reader, since)

    async def queue_health(self) -> QueueHealth:
        row = await self.store.reader.fetchone(
            "SELECT sum(CASE WHEN state = 'queued' THEN 1 ELSE 0 END), "
            "sum(CASE WHEN state = 'running' THEN 1 ELSE 0 END), "
            "min(CASE WHEN state = 'queued' THEN created_at END) "
            "FROM jobs WHERE state IN ('queued', 'running')"
        )
        assert row is not None
        return QueueHealth(row[0] or 0, row[1] or 0, row[2])

    def repo_text(self, relative: str, limit: int) -> tuple[str, bool] | None:
        """A text file of the repository (an intent, a report) and whether it was cut at
        `limit` characters; None when it is missing, unreadable or outside the repository.
        Blocking: call it in a thread."""
        root = self.repo.resolve()
        path = (root / relative).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            return None
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read(limit + 1)
        except OSError:
            return None
        return text[:limit], len(text) > limit
