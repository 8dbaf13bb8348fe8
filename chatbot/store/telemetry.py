"""One row per model run: what was configured, what ran, what it cost, how it ended.

`outcome` says how the run itself ended ("ok" or why not); `accepted` whether the bot
applied its answer (None until judged, and for runs whose answer was never meant to be
applied on its own, like an unfinished builder turn); `rejection` why it refused it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from chatbot.store.db import Db, Row


@dataclass(frozen=True)
class RunRecord:
    role: str
    runtime: str
    configured_model: str
    actual_model: str | None
    reasoning_effort: str
    input_tokens: int | None
    cached_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    duration_s: float
    turns: int | None
    outcome: str
    session_id: str | None
    job_id: int | None = None
    card_id: int | None = None
    prompt: str | None = None
    response: str | None = None
    created_at: float = 0.0
    pipeline_run_id: str | None = None
    #: `reasoning_effort` is the configured one (lane or role); this is the one the run
    #: was started with, after the operator's choice or an escalation step (None: the
    #: CLI's own default).
    actual_reasoning_effort: str | None = None
    review_decision: str | None = None
    accepted: bool | None = None
    rejection: str | None = None
    #: `cost_usd` is tokens times the runtime's configured price, not the CLI's figure.
    cost_estimated: bool = False
    #: Owners' steers the agent took during this run.
    steers: int = 0

    @property
    def shown_outcome(self) -> str:
        """What the run came to: a refused answer is not "ok"."""
        if self.accepted is False:
            return f"rejected: {self.rejection or ''}".rstrip(": ")
        return self.outcome

    @classmethod
    def from_row(cls, row: Row) -> RunRecord:
        values = dict(row)
        values.pop("id")
        values.pop("slug", None)
        if values["accepted"] is not None:
            values["accepted"] = bool(values["accepted"])
        values["cost_estimated"] = bool(values["cost_estimated"])
        return cls(**values)


_COLUMNS = (
    "job_id",
    "card_id",
    "role",
    "runtime",
    "configured_model",
    "actual_model",
    "reasoning_effort",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "cost_usd",
    "duration_s",
    "turns",
    "outcome",
    "session_id",
    "prompt",
    "response",
    "created_at",
    "pipeline_run_id",
    "actual_reasoning_effort",
    "review_decision",
    "accepted",
    "rejection",
    "cost_estimated",
    "steers",
)
_INSERT = f"INSERT INTO telemetry ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"


async def record(db: Db, run: RunRecord) -> int:
    # getattr: the record's values for the insert's columns, which are its field names
    values = {column: getattr(run, column) for column in _COLUMNS}
    values["created_at"] = run.created_at or time.time()
    return await db.insert(_INSERT, tuple(values.values()))


async def mark_rejected(db: Db, run_id: int, detail: str) -> None:
    """The run ended well but its answer was refused: it did not count."""
    await db.execute(
        "UPDATE telemetry SET accepted = 0, rejection = ? WHERE id = ?", (detail[:240], run_id)
    )


async def mark_accepted(db: Db, run_id: int, review_decision: str | None = None) -> None:
    """The run's answer was applied (with the reviewer's decision, for a review)."""
    await db.execute(
        "UPDATE telemetry SET accepted = 1, review_decision = ? WHERE id = ?",
        (review_decision, run_id),
    )


async def for_card(db: Db, card_id: int, limit: int = 10) -> list[RunRecord]:
    rows = await db.fetchall(
        "SELECT * FROM telemetry WHERE card_id = ? ORDER BY id DESC LIMIT ?", (card_id, limit)
    )
    return [RunRecord.from_row(r) for r in rows]


async def for_pipeline(
    db: Db, pipeline_run_id: str, limit: int = 200
) -> list[tuple[str, RunRecord]]:
    """The runs of one pipeline (a card and its children), oldest first, with card slugs."""
    rows = await db.fetchall(
        "SELECT t.*, coalesce(c.slug, '-') AS slug FROM telemetry t "
        "LEFT JOIN cards c ON c.id = t.card_id "
        "WHERE t.pipeline_run_id = ? ORDER BY t.id LIMIT ?",
        (pipeline_run_id, limit),
    )
    return [(row["slug"], RunRecord.from_row(row)) for row in rows]
