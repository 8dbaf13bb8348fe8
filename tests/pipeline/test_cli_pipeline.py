"""The CLI without chat, with the stand-in CLIs: the failure paths a real model gives
only by chance (the happy paths run on the real CLIs in tests/realcli)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.inprocess import chatbot
from tests.pipeline import harness
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
    text = CONFIG.format(bin=BIN)
    if harness.DATABASE is not None:  # the PostgreSQL run (tests/pipeline/conftest.py)
        text = text.replace('database = "board.sqlite3"\n', harness.DATABASE.toml(), 1)
    config.write_text(text)
    env = {
        **os.environ,
        "FAKE_CLI_SCENARIO": str(scenario),
        "FAKE_CLI_STATE": str(tmp_path / "state.json"),
        "FAKE_CLI_LOG": str(tmp_path / "calls.jsonl"),
    }
    return config, env


def cli(config: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return chatbot(*args, "--config", str(config), env=env)


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
    assert failed.returncode == 1 and "1 job failed" in failed.stderr
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


def test_cli_a_worker_alone_runs_the_jobs_the_bot_alone_does_not(tmp_path: Path) -> None:
    turns = [
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
    assert cli(config, env, "start", "greeting").returncode == 0
    refused = cli(config, env, "run", "--until-idle", "--no-worker")
    assert refused.returncode == 2 and "--no-worker" in refused.stderr
    # Only a worker: no chat, no outbox sender; it ran operator, builder and reviewer.
    done = cli(config, env, "worker", "--until-idle")
    assert done.returncode == 0, done.stderr
    card = json.loads(cli(config, env, "card", "greeting", "--json").stdout)
    assert card["phase"] == "ready_for_deployment"
    runs = json.loads(cli(config, env, "runs", "--json").stdout)
    assert runs["jobs"] == []
