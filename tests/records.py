"""A model run's record for tests: a plain, finished builder run unless told otherwise,
so a test names only the fields it is about."""

from __future__ import annotations

from typing import Any

from chatbot.store.telemetry import RunRecord

_PLAIN: dict[str, Any] = {
    "role": "builder",
    "runtime": "codex",
    "configured_model": "m",
    "actual_model": None,
    "reasoning_effort": "",
    "input_tokens": 1,
    "cached_tokens": 0,
    "output_tokens": 1,
    "cost_usd": None,
    "duration_s": 1.0,
    "turns": 1,
    "outcome": "ok",
    "session_id": None,
}


def run_record(**changes: Any) -> RunRecord:
    return RunRecord(**(_PLAIN | changes))
