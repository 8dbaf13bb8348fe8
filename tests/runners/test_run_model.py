"""run_model end to end against the fake CLIs in tests/bin: argv, stdin, parsing, failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from runners.process import Outcome, ProcessLimits
from runners.runtimes import InvalidRequest, Mode, RunnerError, RunRequest, Usage, run_model
from tests.runners.conftest import FAKE_CLAUDE, FAKE_CODEX, FAST, FakeCli, assert_all_dead

HANG = ProcessLimits(timeout=1.5, idle_timeout=0.5, kill_grace=0.2)


def codex_request(cwd: Path, prompt: str = "role: reviewer\ncheck commit abc", **kw) -> RunRequest:
    return RunRequest(binary=FAKE_CODEX, cwd=cwd, prompt=prompt, **kw)


def claude_request(cwd: Path, prompt: str = "role: reviewer\ncheck commit abc", **kw) -> RunRequest:
    return RunRequest(binary=FAKE_CLAUDE, cwd=cwd, prompt=prompt, **kw)


async def run(fake: FakeCli, runtime: str, request: RunRequest, **kw):
    kw.setdefault("limits", FAST)
    return await run_model(runtime, request, base_env=fake.env, **kw)


# --- codex ------------------------------------------------------------------------------


async def test_codex_success(fake_cli: FakeCli, workdir: Path) -> None:
    usage = {"input_tokens": 900, "cached_input_tokens": 600, "output_tokens": 70}
    fake_cli.write({"answer": "===REVIEW-REPORT===\nfine", "usage": usage})
    result = await run(
        fake_cli, "codex", codex_request(workdir, model="gpt-5", reasoning_effort="low")
    )
    assert result.ok, result.failure
    assert result.outcome is Outcome.OK
    assert result.output.answer == "===REVIEW-REPORT===\nfine"
    assert result.output.usage == Usage(900, 600, 70)
    assert result.output.session_id
    (call,) = fake_cli.calls()
    assert call["stdin"] == "role: reviewer\ncheck commit abc"
    assert call["cwd"] == str(workdir)
    assert call["argv"][-1] == "-"
    assert call["config"] == {"model_reasoning_effort": "low"}


async def test_codex_read_only_cannot_write_but_builder_can(
    fake_cli: FakeCli, workdir: Path
) -> None:
    turn = {"answer": "changed", "files": {"src/app.py": "print(1)\n"}, "repeat": True}
    fake_cli.write(turn)
    await run(fake_cli, "codex", codex_request(workdir))
    assert not (workdir / "src/app.py").exists()
    result = await run(fake_cli, "codex", codex_request(workdir, mode=Mode.WORKSPACE_WRITE))
    assert result.ok
    assert (workdir / "src/app.py").read_text() == "print(1)\n"
    denied, written = fake_cli.calls()
    assert denied["denied"] == ["src/app.py"] and written["written"] == ["src/app.py"]


async def test_codex_resume_records_only_the_new_usage(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write(
        {"answer": "iteration 1", "usage": {"input_tokens": 1000, "output_tokens": 100}},
        {"answer": "iteration 2", "usage": {"input_tokens": 400, "output_tokens": 30}},
    )
    builder = codex_request(workdir, prompt="role: builder", mode=Mode.WORKSPACE_WRITE)
    first = await run(fake_cli, "codex", builder)
    session = first.output.session_id
    assert first.output.usage == Usage(1000, 0, 100)
    again = RunRequest(**{**_fields(builder), "resume_session_id": session, "prompt": "go on"})
    second = await run(fake_cli, "codex", again, previous_usage=first.output.thread_usage)
    assert second.ok, second.failure
    assert second.output.session_id == session
    assert second.output.thread_usage == Usage(1400, 0, 130)
    assert second.output.usage == Usage(400, 0, 30)
    assert fake_cli.calls()[1]["argv"][-3:] == ["resume", session, "-"]


async def test_codex_resume_of_an_unknown_session_fails(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"answer": "never"})
    result = await run(fake_cli, "codex", codex_request(workdir, resume_session_id="no-such"))
    assert result.outcome is Outcome.EXIT_NONZERO
    assert "no rollout found for thread id no-such" in result.failure


async def test_codex_turn_failed_with_exit_zero(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write(
        {"answer": "half", "turn_failed": "You've hit your usage limit.", "exit_code": 0}
    )
    result = await run(fake_cli, "codex", codex_request(workdir))
    assert result.exit_code == 0
    assert not result.ok
    assert result.failure == "codex turn failed: You've hit your usage limit."


@pytest.mark.parametrize(
    ("turn", "ok"),
    [
        ({"answer": "fine", "error_events": ["Reconnecting... 1/5", "Reconnecting... 2/5"]}, True),
        ({"answer": "fine", "damaged_line": "before_answer"}, True),
        ({"answer": "fine", "legacy_items": True}, True),
        ({"answer": "fine", "damaged_line": "after_answer"}, False),
        ({"no_output": True}, False),
    ],
)
async def test_codex_output_variants(
    fake_cli: FakeCli, workdir: Path, turn: dict, ok: bool
) -> None:
    fake_cli.write(turn)
    result = await run(fake_cli, "codex", codex_request(workdir))
    assert result.ok is ok, result.failure
    if ok:
        assert result.output.answer == "fine"
    else:
        assert result.failure.startswith("codex")


async def test_codex_nonzero_exit_reports_stderr(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"no_output": True, "exit_code": 1, "stderr": "Error: stream error\nfatal: 401"})
    result = await run(fake_cli, "codex", codex_request(workdir))
    assert result.outcome is Outcome.EXIT_NONZERO
    assert result.exit_code == 1
    assert result.failure == "codex: exited with status 1: fatal: 401"


async def test_codex_silent_hang_is_killed_with_its_helper(
    fake_cli: FakeCli, workdir: Path
) -> None:
    fake_cli.write({"hang": "before_output", "spawn_child": True, "ignore_sigterm": True})
    result = await run(fake_cli, "codex", codex_request(workdir), limits=HANG)
    assert result.outcome is Outcome.IDLE_TIMEOUT
    assert result.failure == "codex: no output for 0.5s"
    (call,) = fake_cli.calls()
    await assert_all_dead(call["pgid"], call["pid"], call["child_pid"])


async def test_codex_hang_after_output_keeps_the_partial_telemetry(
    fake_cli: FakeCli, workdir: Path
) -> None:
    fake_cli.write({"answer": "almost", "hang": "after_output", "session_id": "th-1"})
    result = await run(fake_cli, "codex", codex_request(workdir), limits=HANG)
    assert result.outcome is Outcome.IDLE_TIMEOUT
    assert not result.ok
    assert result.output.session_id == "th-1"
    assert result.output.answer == "almost"


async def test_codex_trickling_hang_hits_the_wall_clock(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"hang": "trickle", "spawn_child": True})
    result = await run(fake_cli, "codex", codex_request(workdir), limits=HANG)
    assert result.outcome is Outcome.TIMEOUT
    assert result.failure == "codex: timed out after 1.5s"
    assert "working..." in result.stderr_tail
    (call,) = fake_cli.calls()
    await assert_all_dead(call["pgid"], call["pid"], call["child_pid"])


async def test_codex_huge_output_over_the_cap(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"answer": "x", "huge_output_bytes": 3_000_000})
    limits = ProcessLimits(timeout=10, idle_timeout=5, output_cap=1_000_000, kill_grace=0.2)
    result = await run(fake_cli, "codex", codex_request(workdir), limits=limits)
    assert result.outcome is Outcome.OUTPUT_CAP
    assert result.failure == "codex: output exceeded the cap of 1000000 bytes"


async def test_codex_multi_megabyte_line_under_the_cap(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"answer": "tail", "huge_output_bytes": 4_000_000})
    result = await run(fake_cli, "codex", codex_request(workdir))
    assert result.ok, result.failure
    assert len(result.output.answer) == 4_000_000 + len("\n\ntail")


# --- claude -----------------------------------------------------------------------------


async def test_claude_success(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write(
        {
            "answer": "report",
            "cost_usd": 0.25,
            "num_turns": 7,
            "model": "claude-opus-4-1",
            "usage": {"input_tokens": 5, "cache_read_input_tokens": 50, "output_tokens": 9},
        }
    )
    request = claude_request(
        workdir, model="opus", reasoning_effort="high", allowed_tools=("Read",)
    )
    result = await run(fake_cli, "claude", request)
    assert result.ok, result.failure
    out = result.output
    assert (out.answer, out.cost_usd, out.turns, out.model) == (
        "report",
        0.25,
        7,
        "claude-opus-4-1",
    )
    assert out.usage == Usage(5 + 100 + 50, 50, 9)
    assert out.session_id
    (call,) = fake_cli.calls()
    assert call["stdin"] == request.prompt


async def test_claude_is_error_with_exit_zero(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"answer": "API Error: 401 invalid x-api-key", "is_error": True})
    result = await run(fake_cli, "claude", claude_request(workdir))
    assert result.exit_code == 0
    assert not result.ok
    assert "API Error: 401 invalid x-api-key" in result.failure


async def test_claude_turn_limit(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"answer": "not yet", "num_turns": 30, "exit_code": 1})
    request = claude_request(workdir, mode=Mode.WORKSPACE_WRITE, max_turns=10)
    result = await run(fake_cli, "claude", request)
    assert not result.ok
    assert result.output.turn_limit_reached
    assert "error_max_turns" in result.failure


async def test_claude_array_output_and_resume(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"answer": "one", "array_output": True}, {"answer": "two"})
    first = await run(fake_cli, "claude", claude_request(workdir))
    assert first.ok and first.output.model == "claude-sonnet-4-5-20250929"
    follow_up = claude_request(workdir, resume_session_id=first.output.session_id)
    second = await run(fake_cli, "claude", follow_up)
    assert second.ok and second.output.answer == "two"
    assert second.output.session_id == first.output.session_id


async def test_claude_read_only_cannot_write(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"answer": "tried", "files": {"x.txt": "no"}, "repeat": True})
    await run(fake_cli, "claude", claude_request(workdir))
    assert not (workdir / "x.txt").exists()
    await run(fake_cli, "claude", claude_request(workdir, mode=Mode.WORKSPACE_WRITE))
    assert (workdir / "x.txt").read_text() == "no"


async def test_claude_hang_with_helper_is_killed(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"hang": "before_output", "spawn_child": True})
    result = await run(fake_cli, "claude", claude_request(workdir), limits=HANG)
    assert result.outcome is Outcome.IDLE_TIMEOUT
    (call,) = fake_cli.calls()
    await assert_all_dead(call["pgid"], call["pid"], call["child_pid"])


# --- both -------------------------------------------------------------------------------


async def test_missing_binary(fake_cli: FakeCli, workdir: Path) -> None:
    request = RunRequest(binary="/opt/nowhere/codex", cwd=workdir, prompt="x")
    result = await run(fake_cli, "codex", request)
    assert result.outcome is Outcome.NOT_FOUND
    assert result.failure == "codex: binary not found: /opt/nowhere/codex"


async def test_missing_working_directory(fake_cli: FakeCli, tmp_path: Path) -> None:
    with pytest.raises(RunnerError, match="working directory does not exist"):
        await run(fake_cli, "codex", codex_request(tmp_path / "removed-worktree"))


async def test_invalid_model_is_refused_before_anything_runs(
    fake_cli: FakeCli, workdir: Path
) -> None:
    fake_cli.write({"answer": "x"})
    with pytest.raises(InvalidRequest):
        await run(
            fake_cli, "claude", claude_request(workdir, model="--dangerously-skip-permissions")
        )
    assert fake_cli.calls() == []


async def test_one_scenario_drives_a_whole_pipeline(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write(
        {"match": "ROLE=reviewer", "answer": "===REVIEW-RESULT===approve"},
        {"match": "ROLE=operator", "answer": "decision: direct_builder"},
        {"match": "ROLE=builder", "cli": "claude", "answer": "built", "files": {"f.txt": "1"}},
    )
    operator = await run(fake_cli, "codex", codex_request(workdir, prompt="ROLE=operator card a"))
    builder = await run(
        fake_cli,
        "claude",
        claude_request(workdir, prompt="ROLE=builder card a", mode=Mode.WORKSPACE_WRITE),
    )
    reviewer = await run(fake_cli, "codex", codex_request(workdir, prompt="ROLE=reviewer of f.txt"))
    answers = [r.output.answer for r in (operator, builder, reviewer)]
    assert answers == ["decision: direct_builder", "built", "===REVIEW-RESULT===approve"]
    assert (workdir / "f.txt").read_text() == "1"
    assert [call["cli"] for call in fake_cli.calls()] == ["codex", "claude", "codex"]
    # every turn was consumed: a fourth call has nothing left to answer
    extra = await run(fake_cli, "codex", codex_request(workdir, prompt="ROLE=operator again"))
    assert not extra.ok and "no scenario turn left" in extra.failure


def _fields(request: RunRequest) -> dict:
    return {name: getattr(request, name) for name in RunRequest.__slots__}
