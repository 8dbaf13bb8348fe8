"""Output parsers on samples in the real CLIs' formats."""

from __future__ import annotations

import json

from runners.runtimes import Usage, claude, codex
from runners.runtimes.base import MAX_FAILURE_DETAIL, clean_detail


def jsonl(*events: object) -> str:
    return "\n".join(e if isinstance(e, str) else json.dumps(e) for e in events) + "\n"


THREAD = {"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"}
TURN = {"type": "turn.started"}
REASONING = {
    "type": "item.completed",
    "item": {"id": "item_0", "type": "reasoning", "text": "**Scanning the repo**"},
}
COMMAND = {
    "type": "item.completed",
    "item": {
        "id": "item_1",
        "type": "command_execution",
        "command": "bash -lc ls",
        "aggregated_output": "README.md\n",
        "exit_code": 0,
        "status": "completed",
    },
}


def message(text: str, item_id: str = "item_2") -> dict:
    return {
        "type": "item.completed",
        "item": {"id": item_id, "type": "agent_message", "text": text},
    }


def completed(inp: int, cached: int, out: int) -> dict:
    usage = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out}
    return {"type": "turn.completed", "usage": usage}


# --- codex -----------------------------------------------------------------------------


def test_codex_answer_session_and_usage() -> None:
    out = codex.parse_output(
        jsonl(
            THREAD, TURN, REASONING, COMMAND, message("The answer."), completed(24763, 24448, 122)
        )
    )
    assert out.ok
    assert out.answer == "The answer."
    assert out.session_id == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert out.usage == Usage(24763, 24448, 122)
    assert out.thread_usage == Usage(24763, 24448, 122)
    assert out.turns == 1
    assert out.cost_usd is None


def test_codex_joins_several_agent_messages_in_order() -> None:
    out = codex.parse_output(
        jsonl(THREAD, message("first", "item_1"), message("second", "item_3"), completed(1, 0, 1))
    )
    assert out.answer == "first\n\nsecond"


def test_codex_accepts_older_item_names() -> None:
    older = {
        "type": "item.completed",
        "item": {"id": "item_0", "item_type": "assistant_message", "text": "legacy answer"},
    }
    session = {"type": "session.created", "session_id": "sess-42"}
    out = codex.parse_output(jsonl(session, older))
    assert out.ok
    assert out.answer == "legacy answer"
    assert out.session_id == "sess-42"


def test_codex_damaged_line_before_a_valid_final_message_is_skipped() -> None:
    damaged = '{"type":"item.completed","item":{"id":"item_9","type":"agent_mess'
    out = codex.parse_output(jsonl(THREAD, TURN, damaged, message("Final."), completed(5, 0, 2)))
    assert out.ok
    assert out.answer == "Final."


def test_codex_damaged_line_where_the_end_should_be_is_a_failure() -> None:
    out = codex.parse_output(jsonl(THREAD, TURN, message("half"), '{"type":"turn.compl'))
    assert not out.ok
    assert "damaged" in out.failure


def test_codex_trailing_garbage_after_a_completed_turn_is_tolerated() -> None:
    out = codex.parse_output(jsonl(THREAD, message("done"), completed(1, 0, 1), "not json"))
    assert out.ok


def test_codex_only_damaged_lines_fail() -> None:
    out = codex.parse_output("{oops\n[1,2\n")
    assert not out.ok
    assert "damaged" in out.failure


def test_codex_error_events_are_not_fatal() -> None:
    reconnect = {"type": "error", "message": "Reconnecting... 1/5"}
    out = codex.parse_output(
        jsonl(THREAD, TURN, reconnect, message("ok after all"), completed(1, 0, 1))
    )
    assert out.ok
    assert out.answer == "ok after all"


def test_codex_error_event_explains_a_missing_answer() -> None:
    out = codex.parse_output(
        jsonl(THREAD, TURN, {"type": "error", "message": "stream disconnected"})
    )
    assert not out.ok
    assert "stream disconnected" in out.failure


def test_codex_turn_failed_is_a_failure_even_with_an_answer() -> None:
    failed = {"type": "turn.failed", "error": {"message": "usage limit reached\x1b[0m"}}
    out = codex.parse_output(jsonl(THREAD, TURN, message("partial"), failed))
    assert not out.ok
    assert out.failure == "codex turn failed: usage limit reached [0m"
    assert out.answer == "partial"


def test_codex_no_answer_is_a_failure() -> None:
    out = codex.parse_output(jsonl(THREAD, TURN, REASONING, completed(1, 0, 1)))
    assert out.failure == "codex gave no answer"
    assert codex.parse_output("").failure == "codex gave no answer"


def test_codex_resumed_run_records_the_usage_difference() -> None:
    previous = Usage(1000, 800, 100)
    out = codex.parse_output(jsonl(THREAD, message("again"), completed(1600, 1300, 180)), previous)
    assert out.thread_usage == Usage(1600, 1300, 180)
    assert out.usage == Usage(600, 500, 80)


def test_codex_usage_that_went_backwards_is_taken_as_is() -> None:
    out = codex.parse_output(jsonl(message("x"), completed(50, 0, 5)), Usage(1000, 0, 100))
    assert out.usage == Usage(50, 0, 5)


def test_codex_last_turn_completed_wins() -> None:
    out = codex.parse_output(jsonl(message("x"), completed(10, 0, 1), completed(30, 5, 4)))
    assert out.thread_usage == Usage(30, 5, 4)
    assert out.turns == 2


# --- claude -----------------------------------------------------------------------------

RESULT = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "duration_ms": 13402,
    "duration_api_ms": 12817,
    "num_turns": 4,
    "result": "Review done.",
    "session_id": "5f0b3a4e-8d57-4b5b-9a43-1c3f0d0e8a11",
    "total_cost_usd": 0.0874,
    "usage": {
        "input_tokens": 9,
        "cache_creation_input_tokens": 5120,
        "cache_read_input_tokens": 40960,
        "output_tokens": 512,
        "server_tool_use": {"web_search_requests": 0},
        "service_tier": "standard",
    },
    "modelUsage": {
        "claude-haiku-4-5-20251001": {"inputTokens": 300, "outputTokens": 20, "costUSD": 0.001},
        "claude-sonnet-4-5-20250929": {"inputTokens": 9, "outputTokens": 512, "costUSD": 0.08},
    },
    "permission_denials": [],
    "uuid": "9c1b2a61-0d8e-4a59-9d55-2f3c6f7c1e0a",
}


def test_claude_result_object() -> None:
    out = claude.parse_output(json.dumps(RESULT))
    assert out.ok
    assert out.answer == "Review done."
    assert out.session_id == "5f0b3a4e-8d57-4b5b-9a43-1c3f0d0e8a11"
    assert out.cost_usd == 0.0874
    assert out.turns == 4
    assert out.duration_ms == 13402
    assert out.usage == Usage(9 + 5120 + 40960, 40960, 512)
    assert out.model == "claude-sonnet-4-5-20250929"  # the model that wrote most output
    assert not out.turn_limit_reached


def test_claude_array_form_last_result_counts() -> None:
    init = {"type": "system", "subtype": "init", "model": "claude-opus-4-1", "session_id": "s"}
    assistant = {"type": "assistant", "message": {"content": [{"type": "text", "text": "hm"}]}}
    stale = {**RESULT, "result": "stale"}
    out = claude.parse_output(json.dumps([init, stale, assistant, RESULT]))
    assert out.ok
    assert out.answer == "Review done."
    assert out.model == "claude-opus-4-1"


def test_claude_array_without_result_fails() -> None:
    out = claude.parse_output(json.dumps([{"type": "system", "subtype": "init"}]))
    assert not out.ok
    assert "no result" in out.failure


def test_claude_is_error_with_subtype_success_is_a_failure() -> None:
    error = {**RESULT, "is_error": True, "result": "API Error: 529 Overloaded"}
    out = claude.parse_output(json.dumps(error))
    assert not out.ok
    assert "API Error: 529 Overloaded" in out.failure
    assert out.cost_usd == 0.0874  # telemetry is kept for failed runs too


def test_claude_error_max_turns_carries_errors_and_flags_the_limit() -> None:
    # As Claude Code 2.1 ends a run at --max-turns: is_error, no result, the reason in errors.
    limit = {k: v for k, v in RESULT.items() if k != "result"}
    limit.update(
        subtype="error_max_turns",
        is_error=True,
        num_turns=13,
        errors=["Reached maximum number of turns (12)"],
    )
    out = claude.parse_output(json.dumps(limit))
    assert not out.ok
    assert out.turn_limit_reached
    assert out.failure == (
        "claude reported an error (error_max_turns): Reached maximum number of turns (12)"
    )
    assert out.turns == 13


def test_claude_error_during_execution_without_errors() -> None:
    out = claude.parse_output(json.dumps({**RESULT, "subtype": "error_during_execution"}))
    assert out.failure == "claude ended with error_during_execution: no detail"
    assert not out.turn_limit_reached


def test_claude_legacy_cost_field_and_explicit_model() -> None:
    old = {k: v for k, v in RESULT.items() if k not in ("total_cost_usd", "modelUsage")}
    out = claude.parse_output(json.dumps({**old, "cost_usd": 0.5, "model": "claude-3-7-sonnet"}))
    assert out.cost_usd == 0.5
    assert out.model == "claude-3-7-sonnet"


def test_claude_warning_line_before_the_json() -> None:
    out = claude.parse_output("Warning: something odd\n" + json.dumps(RESULT) + "\n")
    assert out.ok
    assert out.answer == "Review done."


def test_claude_invalid_or_empty_output() -> None:
    assert "not JSON" in claude.parse_output("{half").failure
    assert claude.parse_output("").failure == "claude produced no output"
    assert claude.parse_output(json.dumps({**RESULT, "result": "  "})).failure == (
        "claude gave no answer"
    )


# --- failure details ---------------------------------------------------------------------


def test_failure_detail_is_clean_and_short() -> None:
    detail = clean_detail("line one\nline\ttwo\x00\x07 " + "z" * 500)
    assert detail.startswith("line one line two ")
    assert len(detail) == MAX_FAILURE_DETAIL
    assert not any(ord(ch) < 32 for ch in detail)
    assert clean_detail("\n\n") == "unknown error"


def test_parsers_bound_their_failure_text() -> None:
    failed = {"type": "turn.failed", "error": {"message": "e" * 5000}}
    assert len(codex.parse_output(jsonl(failed)).failure) == MAX_FAILURE_DETAIL
    error = {**RESULT, "is_error": True, "result": "r\n" * 5000}
    assert len(claude.parse_output(json.dumps(error)).failure) == MAX_FAILURE_DETAIL
