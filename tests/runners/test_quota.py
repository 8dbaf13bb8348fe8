"""A spent quota or rate limit, read from what the real CLIs printed (recorded by
tests/realcli/capture_quota.py into tests/runners/data/quota/): the run's output says
`limited`, with the reset time the CLI gave; other failures are not limited."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from runners.runtimes import RUNTIMES, codex_limits

DATA = Path(__file__).parent / "data" / "quota"


def recorded(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


def test_codex_usage_limit_gives_its_reset_time() -> None:
    record = recorded("codex_usage_limit")
    output = RUNTIMES["codex"].parse_output(record["stdout"], None)
    assert not output.ok
    assert output.limited is not None
    assert "hit your usage limit" in output.limited.reason
    # codex printed the provider's resets_at (2030-01-01T00:00Z) in its local time.
    assert output.limited.reset_at == datetime(2030, 1, 1, 0, 0).timestamp()


@pytest.mark.parametrize("name", ["codex_quota", "codex_rate_limit"])
def test_codex_quota_and_429_are_limited_without_a_reset_time(name: str) -> None:
    output = RUNTIMES["codex"].parse_output(recorded(name)["stdout"], None)
    assert output.limited is not None
    assert output.limited.reset_at is None


def test_claude_429_is_limited() -> None:
    record = recorded("claude_rate_limit")
    output = RUNTIMES["claude"].parse_output(record["stdout"], None)
    assert not output.ok
    assert output.limited is not None
    assert "Request rejected (429)" in output.limited.reason
    # The same output read as an interactive run's (the builder's) says the same.
    assert RUNTIMES["claude"].talking.parse_output(record["stdout"], None).limited


def test_claude_subscription_limit_takes_the_reset_from_its_rate_limit_event() -> None:
    lines = recorded("claude_rate_limit")["stdout"].splitlines()
    event = {
        "type": "rate_limit_event",
        "rate_limit_info": {"status": "rejected", "resetsAt": 1893456000},
    }
    result = json.loads(lines[-1])
    result.pop("api_error_status")
    result.pop("api_error_type")
    result["result"] = "You've hit your session limit · resets 3pm"
    stdout = "\n".join([*lines[:-1], json.dumps(event), json.dumps(result)])
    limited = RUNTIMES["claude"].parse_output(stdout, None).limited
    assert limited is not None and limited.reset_at == 1893456000


def test_claude_legacy_usage_limit_text_carries_its_epoch() -> None:
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "Claude AI usage limit reached|1893456000",
    }
    limited = RUNTIMES["claude"].parse_output(json.dumps(result), None).limited
    assert limited is not None and limited.reset_at == 1893456000


def test_other_failures_are_not_limited() -> None:
    failed = [
        {"type": "thread.started", "thread_id": "t1"},
        {"type": "turn.failed", "error": {"message": "unexpected status 500: boom"}},
    ]
    codex = RUNTIMES["codex"].parse_output("\n".join(map(json.dumps, failed)), None)
    assert not codex.ok and codex.limited is None
    result = {"type": "result", "subtype": "success", "is_error": True, "result": "API Error: 500"}
    claude = RUNTIMES["claude"].parse_output(json.dumps(result), None)
    assert not claude.ok and claude.limited is None


def test_codex_time_of_day_reset_is_the_next_such_time() -> None:
    now = datetime(2030, 5, 4, 16, 0).timestamp()
    limited = codex_limits.limited("You've hit your usage limit. Try again at 3:15 PM.", now)
    assert limited is not None
    assert limited.reset_at == datetime(2030, 5, 5, 15, 15).timestamp()
