"""The gemini runtime's pure parts: the invocation it builds (argv, environment, the files
it needs in its home) and how it reads Gemini CLI 0.61.0's stream-json output. The
lines below are the real CLI's (tests/realcli runs it); what it does with them is
shown there too."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from chatbot.domain.roles import BY_NAME
from runners.runtimes import InvalidRequest, Mode, RunRequest, Usage, gemini
from runners.runtimes.base import Grant

HOME = Path("/srv/board/workspaces/.agent-homes/gemini")
CWD = Path("/srv/board/workspaces/greeting")
KEY = Path("/etc/board/gemini-key")
SESSION = "c26612c0-e3a4-47ab-b939-82983bc0aad2"


def request(**fields: object) -> RunRequest:
    given: dict[str, object] = {
        "binary": "gemini",
        "cwd": CWD,
        "prompt": "Build it.",
        "model": "gemini-2.5-flash",
        "home": HOME,
        "api_key_file": KEY,
    }
    return RunRequest(**{**given, **fields})  # type: ignore[arg-type]


def test_a_read_only_run_is_headless_default_mode_in_the_bots_home() -> None:
    built = gemini.build_argv(request(base_url="http://127.0.0.1:8080"))
    assert built.argv == ("gemini", "-o", "stream-json", "--skip-trust", "-m", "gemini-2.5-flash")
    assert built.stdin == "Build it." and built.cwd == CWD
    assert dict(built.env_extras) == {
        "GEMINI_CLI_HOME": str(HOME),
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:8080",
    }
    # The key only as a file to read at spawn, never a value in the invocation.
    assert dict(built.secret_env_files) == {"GEMINI_API_KEY": KEY}
    assert list(built.files) == [HOME / ".gemini" / "settings.json"]


def test_its_settings_select_the_key_hide_it_from_commands_and_read_the_turn_bound() -> None:
    settings = json.loads(gemini.build_argv(request()).files[HOME / ".gemini" / "settings.json"])
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["security"]["environmentVariableRedaction"] == {"enabled": True}
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["model"]["maxSessionTurns"] == "${GEMINI_MAX_TURNS:--1}"


def test_a_writer_runs_in_yolo_mode_bounded_and_resumed() -> None:
    built = gemini.build_argv(
        request(mode=Mode.WORKSPACE_WRITE, max_turns=3, resume_session_id=SESSION)
    )
    assert built.argv[-4:] == ("--approval-mode", "yolo", "--resume", SESSION)
    assert built.env_extras["GEMINI_MAX_TURNS"] == "3"
    assert "GOOGLE_GEMINI_BASE_URL" not in built.env_extras  # its vendor's service


def test_the_reviewers_grants_are_a_policy_file_of_command_prefixes() -> None:
    rules = gemini.RUNTIME.tool_rules(BY_NAME["reviewer"].grants)
    assert rules == ("git show", "git diff", "git log", "git grep")
    built = gemini.build_argv(request(allowed_tools=rules))
    policy = Path(built.argv[built.argv.index("--policy") + 1])
    # Beside, not in, .gemini/policies: the CLI would load that for every run.
    assert policy.parent == HOME / "policies" and policy in built.files
    rules_read = tomllib.loads(built.files[policy])["rule"]
    allow, *denials = rules_read
    assert (allow["decision"], allow["commandPrefix"]) == ("allow", list(rules))
    assert {rule["decision"] for rule in denials} == {"deny"}
    assert all(rule["priority"] > allow["priority"] for rule in denials)
    # The same grants share a file; other grants get their own.
    again = gemini.build_argv(request(allowed_tools=rules))
    other = gemini.build_argv(request(allowed_tools=("git log",)))
    assert policy in again.files and policy not in other.files
    # A writer needs none: yolo mode runs everything in its worktree.
    writer = gemini.build_argv(request(mode=Mode.WORKSPACE_WRITE, allowed_tools=rules))
    assert "--policy" not in writer.argv


@pytest.mark.parametrize(
    "rule", ["Bash(git show *)", "git show; touch x", 'git show"]', "git  show", "-git"]
)
def test_a_rule_outside_its_syntax_never_reaches_the_policy(rule: str) -> None:
    with pytest.raises(InvalidRequest, match="invalid tool rule"):
        gemini.build_argv(request(allowed_tools=(rule,)))


def test_without_a_home_of_its_own_it_does_not_run() -> None:
    with pytest.raises(InvalidRequest, match="home folder"):
        gemini.build_argv(request(home=None))
    assert gemini.RUNTIME.grants[Grant.GIT_READS] == gemini.REVIEW_GIT_COMMANDS


def lines(*events: dict[str, object]) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


INIT = {"type": "init", "session_id": SESSION, "model": "gemini-2.5-flash"}
USER = {"type": "message", "role": "user", "content": "build it"}


def say(text: str) -> dict[str, object]:
    return {"type": "message", "role": "assistant", "content": text, "delta": True}


def use(call: str, command: str) -> dict[str, object]:
    return {
        "type": "tool_use",
        "tool_name": "run_shell_command",
        "tool_id": f"run_shell_command__{call}",
        "parameters": {"command": command},
    }


def done(call: str) -> dict[str, object]:
    return {"type": "tool_result", "tool_id": f"run_shell_command__{call}", "status": "success"}


def result(status: str = "success", error: dict | None = None) -> dict[str, object]:
    stats = {
        "total_tokens": 330,
        "input_tokens": 300,
        "output_tokens": 30,
        "cached": 60,
        "input": 240,
        "duration_ms": 290,
        "tool_calls": 3,
        # Named by the model version the API answered with, not the one asked for.
        "models": {"gemini-2.5-pro": {"output_tokens": 30}, "gemini-2.5-flash": {}},
    }
    return {"type": "result", "status": status, "stats": stats} | (
        {"error": error} if error else {}
    )


def test_the_answer_is_what_it_said_after_its_last_tool_result() -> None:
    # Two calls in one model turn, one in the next, then the answer: three requests.
    out = gemini.parse_output(
        lines(
            INIT,
            USER,
            say("Looking."),
            use("call_1_1", "echo a"),
            use("call_1_2", "echo b"),
            done("call_1_1"),
            done("call_1_2"),
            use("call_2_0", "echo c"),
            done("call_2_0"),
            say("do"),
            say("ne"),
            result(),
        ),
        Usage(1, 1, 1),  # a previous reading changes nothing: usage is per invocation
    )
    assert out.ok and out.answer == "done"
    assert out.session_id == SESSION and out.turns == 3
    assert out.usage == Usage(input_tokens=300, cached_input_tokens=60, output_tokens=30)
    assert out.model == "gemini-2.5-pro" and out.cost_usd is None and out.duration_ms == 290
    assert out.thread_usage is None


def test_the_turn_bound_is_reported_as_such() -> None:
    limit = {
        "type": "FatalTurnLimitedError",
        "message": "Reached max session turns for this session.",
    }
    out = gemini.parse_output(
        lines(
            INIT, use("c1", "ls"), done("c1"), use("c2", "ls"), done("c2"), result("error", limit)
        )
    )
    assert out.turn_limit_reached and out.turns == 2
    assert (
        out.failure
        == "gemini stopped at its turn limit: Reached max session turns for this session."
    )


def test_an_api_error_is_a_failure_with_its_message_and_notices_are_not() -> None:
    notice = {"type": "error", "severity": "warning", "message": "Loop detected"}
    api = {"type": "unknown", "message": '[API Error: {"error":{"code":401}}]'}
    out = gemini.parse_output(lines(INIT, say("Hm."), notice, result("error", api)))
    assert not out.turn_limit_reached
    assert out.failure == 'gemini reported an error (unknown): [API Error: {"error":{"code":401}}]'
    fine = gemini.parse_output(lines(INIT, notice, say("ok"), "not json", result()))
    assert fine.ok and fine.answer == "ok"


@pytest.mark.parametrize(
    ("stdout", "failure"),
    [
        ("", "gemini said nothing"),
        (lines(INIT, say("half")), "gemini output has no result"),
        (
            lines(INIT, {"type": "error", "message": "Invalid stream"}),
            "gemini output has no result; last notice: Invalid stream",
        ),
        (lines(INIT, use("c1", "ls"), done("c1"), result()), "gemini gave no answer"),
    ],
)
def test_a_run_without_a_whole_result_fails(stdout: str, failure: str) -> None:
    out = gemini.parse_output(stdout)
    assert out.failure == failure and not out.turn_limit_reached


def test_steps_are_the_tools_it_calls() -> None:
    assert gemini.step_of(use("c1", "git log --oneline")) == "run_shell_command: git log --oneline"
    write = {"type": "tool_use", "tool_name": "write_file", "parameters": {"file_path": "/w/a.py"}}
    assert gemini.step_of(write) == "write_file: /w/a.py"
    assert gemini.step_of({"type": "tool_use", "tool_name": "glob", "parameters": {}}) == "glob"
    assert gemini.step_of(say("thinking")) is None


def test_why_a_silent_run_stopped_is_its_last_unindented_stderr_line() -> None:
    stderr = (
        "Warning: 256-color support not detected.\n"
        'Error resuming session: Invalid session identifier "x".\n'
        "  Searched for sessions in /h/.gemini/tmp/repo/chats.\n"
        "  Use --list-sessions to see available sessions.\n"
    )
    assert gemini.stderr_reason(stderr) == 'Error resuming session: Invalid session identifier "x".'
    assert gemini.stderr_reason("    at frame (x.js:1)\n") == "    at frame (x.js:1)"
    assert gemini.stderr_reason("") == ""
