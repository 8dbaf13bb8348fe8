"""The operator's CLI without chat: start, answer, split, cancel, runs, run --until-idle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.pipeline.harness import (
    BIN,
    CONFIG,
    builder_answer,
    direct,
    make_repo,
    operator_answer,
    review_answer,
)


def _setup(tmp_path: Path, turns: list[dict]) -> tuple[Path, dict[str, str]]:
    make_repo(tmp_path, {"greeting": "# Greeting\n\nSay hello.\n"})
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"turns": turns}))
    config = tmp_path / "bot.toml"
    config.write_text(CONFIG.format(bin=BIN))
    env = {
        **os.environ,
        "FAKE_CLI_SCENARIO": str(scenario),
        "FAKE_CLI_STATE": str(tmp_path / "state.json"),
        "FAKE_CLI_LOG": str(tmp_path / "calls.jsonl"),
    }
    return config, env


def cli(config: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chatbot", *args, "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_cli_drives_a_card_through_a_question_to_review(tmp_path: Path) -> None:
    question = operator_answer(
        {
            "decision": "needs_human",
            "reason": "unclear",
            "human_action": "English or German greeting?",
        }
    )
    turns = [
        {"match": "OPERATOR-DECISION", "answer": question},
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": builder_answer("Add hello"),
            "files": {"hello.txt": "hello\n"},
        },
        {"match": "REVIEW-RESULT", "answer": review_answer("approve")},
    ]
    config, env = _setup(tmp_path, turns)
    assert cli(config, env, "run", "--until-idle").returncode == 0  # imports the intent

    refused = cli(config, env, "answer", "greeting", "too early")
    assert refused.returncode == 1 and "no open question" in refused.stderr
    started = cli(config, env, "start", "greeting")
    assert started.returncode == 0 and "operator running" in started.stdout
    runs = cli(config, env, "runs")
    assert "queued" in runs.stdout and "operator" in runs.stdout and "role:operator" in runs.stdout
    again = cli(config, env, "start", "greeting")
    assert again.returncode == 1
    assert "phase operator_running" in again.stderr and "allowed: answer" not in again.stderr

    cli(config, env, "run", "--until-idle")
    card = json.loads(cli(config, env, "card", "greeting", "--json").stdout)
    assert card["phase"] == "needs_human"
    answered = cli(config, env, "answer", "greeting", "English, please")
    assert answered.returncode == 0, answered.stderr
    done = cli(config, env, "run", "--until-idle")
    assert done.returncode == 0, done.stderr
    card = json.loads(cli(config, env, "card", "greeting", "--json").stdout)
    assert card["phase"] == "ready_for_deployment" and card["review_decision"] == "approve"
    assert cli(config, env, "runs").stdout.strip() == "no job is queued or running"


def test_cli_cancel_and_split_refusals(tmp_path: Path) -> None:
    config, env = _setup(tmp_path, [])
    cli(config, env, "run", "--until-idle")
    assert cli(config, env, "start", "greeting").returncode == 0
    cancelled = cli(config, env, "cancel", "greeting")
    assert cancelled.returncode == 0 and "planned" in cancelled.stdout
    assert cli(config, env, "runs").stdout.strip() == "no job is queued or running"
    unknown = cli(config, env, "split", "greting")
    assert unknown.returncode == 1 and "did you mean greeting" in unknown.stderr
    split = cli(config, env, "split", "greeting")
    assert split.returncode == 0 and "split requested" in split.stdout


def test_cli_the_issue_sequence_a_failed_operator_run_goes_on(tmp_path: Path) -> None:
    # Exactly as a new user tried it: a fresh board, no bot ever ran, and the
    # operator's answer has an unknown field.
    bad = operator_answer({"decision": "direct_builder", "colour": "red"})
    turns = [
        {"match": "OPERATOR-DECISION", "answer": bad},
        {"match": "OPERATOR-DECISION", "answer": bad},
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": builder_answer("Add hello"),
            "files": {"hello.txt": "hello\n"},
        },
        {"match": "REVIEW-RESULT", "answer": review_answer("approve")},
    ]
    config, env = _setup(tmp_path, turns)
    # The board shows the repository's cards before the bot ever ran.
    assert "greeting" in cli(config, env, "cards").stdout
    assert cli(config, env, "start", "greeting").returncode == 0

    failed = cli(config, env, "run", "--until-idle")
    assert failed.returncode == 1 and "1 job(s) failed" in failed.stderr
    card = json.loads(cli(config, env, "card", "greeting", "--json").stdout)
    assert card["phase"] == "needs_human"
    assert card["failure"]["stage"] == "operator" and "colour" in card["failure"]["detail"]

    # Each way the user tried now moves the card on.
    answered = cli(config, env, "answer", "greeting", "build it")
    assert answered.returncode == 0, answered.stderr
    assert cli(config, env, "run", "--until-idle").returncode == 1  # the same answer again
    retried = cli(config, env, "retry", "greeting")
    assert retried.returncode == 0, retried.stderr
    done = cli(config, env, "run", "--until-idle")
    assert done.returncode == 0, done.stderr
    card = json.loads(cli(config, env, "card", "greeting", "--json").stdout)
    assert card["phase"] == "ready_for_deployment" and card["failure"] is None


def test_cli_start_on_a_card_whose_file_exists_before_the_bot_ran(tmp_path: Path) -> None:
    config, env = _setup(tmp_path, [])
    started = cli(config, env, "start", "greeting")
    assert started.returncode == 0, started.stderr
    assert "operator running" in started.stdout
