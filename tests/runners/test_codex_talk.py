"""Codex through `codex app-server` (runners/runtimes/codex_talk.py, codex_wire.py): the
command lines, the hand-over line and the parser, on transcripts captured from the
pinned codex (tests/runners/data/codex_app_server/, see its README); the driver is in
test_codex_driver.py. The real CLI runs the same paths in
tests/realcli/test_talk_codex_real.py."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from runners.runtimes import RUNTIMES, InvalidRequest, Mode, Usage, codex, openrouter
from runners.runtimes import codex_wire as wire
from tests.runners.codex_transcripts import request, stdout_of, thread_of, transcript

KEY = Path("/etc/bot/secrets/gateway key")
UNKNOWN = "01a22fc5-0000-7000-8000-000000000000"


# --- command lines --------------------------------------------------------------------


def test_the_app_server_gets_the_provider_model_and_effort_that_exec_gets() -> None:
    asked = request(
        model="gpt-5.5", reasoning_effort="high", base_url="http://gw:8080/v1", api_key_file=KEY
    )
    talk = codex.build_talk_argv(asked)
    one_shot = codex.build_argv(asked)
    assert talk.argv[-1] == "app-server" and talk.argv[0] == "codex"
    providers = [arg for arg in one_shot.argv if arg.startswith("model_provider")]
    assert providers and all(arg in talk.argv for arg in providers)
    assert ["-c", 'model="gpt-5.5"', "-c", 'model_reasoning_effort="high"'] == list(
        talk.argv[-5:-1]
    )
    assert talk.secret_env_files == {"GATEWAY_API_KEY": KEY} == one_shot.secret_env_files
    # The prompt goes in turn/start, never on the command line or in a stdin to close.
    assert talk.stdin == "" and all("Do the task." not in arg for arg in talk.argv)
    assert talk.cwd == asked.cwd and talk.runtime == "codex"


def test_without_a_base_url_the_app_server_uses_codexs_own_login() -> None:
    talk = codex.build_talk_argv(request())
    assert talk.argv == ("codex", "app-server") and talk.secret_env_files == {}


def test_openrouter_talks_through_the_same_app_server_with_its_provider() -> None:
    asked = request(model="vendor/model", api_key_file=KEY)
    talk = openrouter.build_talk_argv(asked)
    assert 'model_provider="openrouter"' in talk.argv and talk.argv[-1] == "app-server"
    assert 'model_providers.openrouter.base_url="https://openrouter.ai/api/v1"' in talk.argv
    assert talk.secret_env_files == {"OPENROUTER_API_KEY": KEY} and talk.runtime == "openrouter"
    with pytest.raises(InvalidRequest):
        openrouter.build_talk_argv(request(model="vendor/model"))  # no key file
    with pytest.raises(InvalidRequest):
        codex.build_talk_argv(request(model="bad model; rm -rf /"))


def test_the_hand_over_line_reads_the_key_from_its_file_in_the_shell(tmp_path: Path) -> None:
    # The line run by bash, with a stand-in "codex" that prints its key and arguments:
    # paths with spaces and quotes survive, and the key is in the environment only.
    folder = tmp_path / "the bot's secrets"
    folder.mkdir()
    key = folder / "gateway key"
    key.write_text("sk-secret-value\n")
    shows = tmp_path / "show args"
    shows.write_text('#!/bin/sh\nprintf "%s\\n" "$GATEWAY_API_KEY" "$@"\n')
    shows.chmod(0o755)
    asked = request(
        binary=str(shows),
        cwd=tmp_path / "work tree",
        model="gpt-5.5",
        reasoning_effort="high",
        base_url="http://gw:8080/v1",
        api_key_file=key,
    )
    line = RUNTIMES["codex"].hand_over(asked, UNKNOWN)
    assert "sk-secret-value" not in line
    assert line.startswith("GATEWAY_API_KEY=")
    done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, check=True)
    printed = done.stdout.splitlines()
    assert printed[0] == "sk-secret-value"
    words = printed[1:]
    assert words[0] == "resume" and words[-3:] == ["-C", str(asked.cwd), UNKNOWN]
    assert 'model_provider="gateway"' in words and 'model="gpt-5.5"' in words
    assert 'model_reasoning_effort="high"' in words
    assert words[words.index("--sandbox") + 1] == "workspace-write"
    assert words[words.index("--ask-for-approval") + 1] == "on-request"


def test_the_hand_over_line_of_each_codex_runtime() -> None:
    router = RUNTIMES["openrouter"].hand_over(
        request(model="vendor/model", api_key_file=KEY), UNKNOWN
    )
    assert router.startswith(f'OPENROUTER_API_KEY="$(cat {shlex.quote(str(KEY))})" codex resume ')
    assert 'model_provider="openrouter"' in router
    # Codex's own login: nothing to read, and a reader's sandbox.
    plain = RUNTIMES["codex"].hand_over(request(mode=Mode.READ_ONLY), UNKNOWN)
    assert shlex.split(plain)[:2] == ["codex", "resume"] and "read-only" in shlex.split(plain)
    for bad in ("--last", "id; rm -rf ~", ""):
        with pytest.raises(InvalidRequest):
            RUNTIMES["codex"].hand_over(request(), bad)


# --- the parser -----------------------------------------------------------------------


def test_a_completed_turn_gives_answer_session_usage_and_model() -> None:
    out = wire.parse_output(stdout_of("plain"))
    assert out.failure is None and not out.interrupted
    assert out.answer == "Built it."
    assert out.session_id == thread_of("plain")
    assert out.usage == out.thread_usage == Usage(200, 40, 20)
    assert (out.turns, out.model) == (1, "gpt-5.5")


def test_a_resumed_run_counts_only_its_own_tokens() -> None:
    out = wire.parse_output(stdout_of("resume"), Usage(200, 40, 20))
    assert out.ok and out.answer == "Going on." and out.session_id == thread_of("plain")
    assert out.thread_usage == Usage(300, 60, 30) and out.usage == Usage(100, 20, 10)


def test_an_interrupted_turn_is_no_failure_and_keeps_its_session() -> None:
    out = wire.parse_output(stdout_of("interrupt"))
    assert out.interrupted and out.failure is None and out.answer == ""
    assert out.session_id == thread_of("interrupt")


def test_an_unknown_session_fails_with_codexs_words() -> None:
    out = wire.parse_output(stdout_of("resume_unknown"))
    assert out.failure == f"codex refused the thread: no rollout found for thread id {UNKNOWN}"
    assert not out.interrupted


def test_a_failed_turn_fails_after_the_retries_that_were_no_failure() -> None:
    out = wire.parse_output(stdout_of("turn_failed"))
    assert out.failure is not None
    assert out.failure.startswith("codex turn failed: unexpected status 401 Unauthorized")
    assert "Reconnecting" not in out.failure


def test_damaged_and_foreign_lines_are_skipped_and_decide_nothing() -> None:
    lines = stdout_of("plain").splitlines()
    noisy = [
        "not json",
        "[1, 2]",
        '{"method": 7}',
        '{"id": 3, "result": null}',
        '{"method": "turn/completed", "params": {"turn": ["x"]}}',
        '{"method": "turn/completed", "params": {"turn": {"id": "another", "status": "failed"}}}',
        '{"method": "item/completed", "params": {"item": {"type": "agentMessage", "text": 5}}}',
        '{"method": "thread/tokenUsage/updated", "params": {"tokenUsage": {"total": []}}}',
    ]
    mixed = [noisy[index % len(noisy)] + "\n" + line for index, line in enumerate(lines)]
    out = wire.parse_output("\n".join(mixed) + "\n" + '{"method":"turn/compl')
    assert out == wire.parse_output(stdout_of("plain"))


def test_output_that_ends_before_the_turn_completed_is_a_failure() -> None:
    cut = stdout_of("plain").split('{"method": "turn/completed"')[0]
    out = wire.parse_output(cut)
    assert out.answer == "Built it." and out.failure == "codex ended before its turn completed"
    assert wire.parse_output("").failure == "codex ended before its turn completed"


def test_messages_of_another_thread_are_not_the_runs_answer() -> None:
    other = {
        "method": "item/completed",
        "params": {"threadId": "sub-agent", "item": {"type": "agentMessage", "text": "Not me."}},
    }
    out = wire.parse_output(stdout_of("plain") + json.dumps(other) + "\n")
    assert out.answer == "Built it."


def test_the_steps_are_the_commands_run_and_the_files_changed() -> None:
    steps = [wire.step_of(entry["message"]) for entry in transcript("plain")]
    assert [step for step in steps if step] == ["ran: echo built > built.txt"]
    steps = [wire.step_of(entry["message"]) for entry in transcript("file_change")]
    # The patch inside the workspace; the declined one outside changed nothing.
    assert [step for step in steps if step] == ["changed: /captured/patch/repo/notes.txt"]
