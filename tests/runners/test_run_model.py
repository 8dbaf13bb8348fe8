"""run_model against the stand-in CLIs in tests/bin: the failures a real CLI cannot be
made to show on demand (hangs, damaged or huge output, exit codes, helpers that
linger), and the stand-ins' own scenario machinery. Answers, usage, sessions, resume
and the read-only sandboxes are tested on the real CLIs in tests/realcli."""

from __future__ import annotations

from pathlib import Path

import pytest

from runners.process import Outcome, ProcessLimits
from runners.runtimes import InvalidRequest, Mode, RunnerError, RunRequest, run_model
from tests.runners.conftest import FAKE_CLAUDE, FAKE_CODEX, FAST, FakeCli, assert_all_dead

# The stand-in is a Python program: under load (stress --cpu 2 beside the suite on two
# cores) it took over 0.5 s to start, and a watchdog that short killed it before it could
# record its call. The silence these limits measure must be longer than any start.
HANG = ProcessLimits(timeout=4, idle_timeout=2, kill_grace=0.2)


def codex_request(cwd: Path, prompt: str = "role: reviewer\ncheck commit abc", **kw) -> RunRequest:
    return RunRequest(binary=FAKE_CODEX, cwd=cwd, prompt=prompt, **kw)


def claude_request(cwd: Path, prompt: str = "role: reviewer\ncheck commit abc", **kw) -> RunRequest:
    return RunRequest(binary=FAKE_CLAUDE, cwd=cwd, prompt=prompt, **kw)


async def run(fake: FakeCli, runtime: str, request: RunRequest, **kw):
    kw.setdefault("limits", FAST)
    return await run_model(runtime, request, base_env=fake.env, **kw)


# --- codex ------------------------------------------------------------------------------


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
    assert result.failure == "codex: no output for 2s"
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
    assert result.failure == "codex: timed out after 4s"
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


async def test_claude_is_error_with_exit_zero(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"answer": "API Error: 401 invalid x-api-key", "is_error": True})
    result = await run(fake_cli, "claude", claude_request(workdir))
    assert result.exit_code == 0
    assert not result.ok
    assert "API Error: 401 invalid x-api-key" in result.failure


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
