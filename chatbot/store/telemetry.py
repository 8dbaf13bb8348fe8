"""One row per model run: what was configured, what ran, what it cost, how it ended."""

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

    @classmethod
    def from_row(cls, row: Row) -> RunRecord:
        values = dict(row)
        values.pop("id")
        return cls(**values)


async def record(db: Db, run: RunRecord) -> int:
    return await db.insert(
        "INSERT INTO telemetry (job_id, card_id, role, runtime, configured_model, actual_model, "
        "reasoning_effort, input_tokens, cached_tokens, output_tokens, cost_usd, duration_s, "
        "turns, outcome, session_id, prompt, response, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run.job_id,
            run.card_id,
            run.role,
            run.runtime,
            run.configured_model,
            run.actual_model,
            run.reasoning_effort,
            run.input_tokens,
            run.cached_tokens,
            run.output_tokens,
            run.cost_usd,
            run.duration_s,
            run.turns,
            run.outcome,
            run.session_id,
            run.prompt,
            run.response,
            run.created_at or time.time(),
        ),
    )


async def mark_rejected(db: Db, run_id: int, detail: str) -> None:
    """The run ended well but its answer was refused: it did not count."""
    await db.execute(
        "UPDATE telemetry SET outcome = ? WHERE id = ?", (f"rejected: {detail}"[:240], run_id)
    )


async def for_card(db: Db, card_id: int, limit: int = 10) -> list[RunRecord]:
    rows = await db.fetchall(
        "SELECT * FROM telemetry WHERE card_id = ? ORDER BY id DESC LIMIT ?", (card_id, limit)
    )
    return [RunRecord.from_row(r) for r in rows]
