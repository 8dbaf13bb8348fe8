"""The board's reads for the web board: every card in one query, what changed since a
mark (the live pages' server-sent events), runs per day, the queue's health, the
workers seen, and report files of the repository (never outside it).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, astuple, dataclass, fields
from pathlib import Path
from typing import NamedTuple

from chatbot.domain.phases import Kind, Phase
from chatbot.store import Store, telemetry
from chatbot.store import jobs as job_store
from chatbot.store import talk as talk_store
from chatbot.store import workers as worker_store
from chatbot.store.jobs import Job
from chatbot.store.talk import TalkRow
from chatbot.store.telemetry import RunRecord
from chatbot.store.workers import WorkerRow

# A worker process as the runs page lists it: host, lanes, heartbeat, alive or gone.
WorkerLine = WorkerRow


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

    def token(self) -> str:
        return ":".join(repr(value) for value in astuple(self))

    @classmethod
    def parse(cls, text: str) -> ChangeMark | None:
        parts = text.split(":")
        if len(parts) != len(fields(cls)):
            return None
        try:
            values = [
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


_BOARD_CARDS_SQL = """
SELECT c.slug, c.kind, c.title, c.phase, c.lane, c.updated_at,
  (SELECT max(e.at) FROM events e WHERE e.card_id = c.id) AS moved_at,
  j.state AS job_state,
  CASE WHEN j.state = 'running' THEN j.started_at ELSE j.created_at END AS job_since,
  q.text AS question, q.options AS options
FROM cards c
LEFT JOIN jobs j ON j.card_id = c.id AND j.state IN ('queued', 'running')
LEFT JOIN questions q ON q.card_id = c.id AND q.state = 'open'
{where}
ORDER BY c.updated_at DESC, c.id DESC
"""

_CHANGED_WHERE = """
WHERE c.updated_at > :card_updated
  OR c.id IN (SELECT card_id FROM events WHERE id > :event_id)
  OR c.id IN (SELECT card_id FROM questions
              WHERE id > :question_id OR answered_at > :question_answered)
  OR c.id IN (SELECT card_id FROM jobs
              WHERE id > :job_id OR started_at > :job_started OR finished_at > :job_finished)
  OR c.id IN (SELECT card_id FROM telemetry WHERE id > :run_id)
"""

_MARK_SQL = """
SELECT (SELECT coalesce(max(id), 0) FROM events),
       (SELECT coalesce(max(updated_at), 0.0) FROM cards),
       (SELECT coalesce(max(id), 0) FROM questions),
       (SELECT coalesce(max(answered_at), 0.0) FROM questions),
       (SELECT coalesce(max(id), 0) FROM jobs),
       (SELECT coalesce(max(started_at), 0.0) FROM jobs),
       (SELECT coalesce(max(finished_at), 0.0) FROM jobs),
       (SELECT coalesce(max(id), 0) FROM telemetry)
"""


_PHASES = {phase.value: phase for phase in Phase}
_KINDS = {kind.value: kind for kind in Kind}


def _board_card(row: tuple) -> BoardCard:
    slug, kind, title, phase, lane, updated, moved, job_state, job_since, question, options = row
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
    )


class WebReads:
    """Reads for the web board; mixed into BoardReads so the board exposes them."""

    store: Store
    repo: Path

    async def board_cards(self, changed_since: ChangeMark | None = None) -> list[BoardCard]:
        """Every card as the board shows it, most recently changed first; or only the
        cards that changed after `changed_since`."""
        if changed_since is None:
            where, params = "", {}
        else:
            where, params = _CHANGED_WHERE, asdict(changed_since)
        rows = await self.store.reader.fetchall(_BOARD_CARDS_SQL.format(where=where), params)
        return [_board_card(row) for row in rows]

    async def change_mark(self) -> ChangeMark:
        row = await self.store.reader.fetchone(_MARK_SQL)
        assert row is not None
        return ChangeMark(*row)

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
        days: dict[str, list[float]] = {}
        for created_at, cost in rows:
            day = time.strftime("%Y-%m-%d", time.localtime(created_at))
            runs = days.setdefault(day, [0, 0.0])
            runs[0] += 1
            runs[1] += cost or 0.0
        return [DayRuns(day, int(n), cost) for day, (n, cost) in sorted(days.items())]

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
