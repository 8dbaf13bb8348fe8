"""`[bot] log_format = "json"` (issue 28): one JSON object a line, naming the card, job,
role and transport a line is about, for journald and log shippers."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import pytest

from chatbot.app.logformat import JsonLines
from chatbot.config import ConfigError, parse_config
from chatbot.log_context import about, current, name_task
from tests.board.test_cli import CONFIG, FAKE_CODEX, chatbot

KEYS = {"time", "level", "logger", "message"}


def _board(tmp_path: Path, extra: str) -> Path:
    intents = tmp_path / "repo" / "docs" / "intent"
    intents.mkdir(parents=True)
    (intents / "alpha.md").write_text("# Alpha\n")
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    config = tmp_path / "bot.toml"
    text = CONFIG.format(fake_codex=FAKE_CODEX)
    config.write_text(text.replace('repo = "repo"\n', f'repo = "repo"\n{extra}', 1))
    return config


def test_a_run_logs_one_object_a_line_naming_the_job(tmp_path: Path) -> None:
    config = _board(tmp_path, 'log_format = "json"\n')
    assert chatbot("start", "alpha", "--config", str(config)).returncode == 0
    run = chatbot("run", "--until-idle", "--config", str(config))
    # The stand-in fails the operator's run (no scenario): exit 1, and one line for the
    # person at the terminal that is not a log line.
    assert run.returncode == 1, run.stderr
    said = [line for line in run.stderr.splitlines() if not line.startswith("{")]
    assert said == ["1 job failed; `chatbot card SLUG` shows why"]
    lines = [json.loads(line) for line in run.stderr.splitlines() if line.startswith("{")]
    assert lines and all(KEYS <= set(line) for line in lines)
    # The operator's run is told with what it was about.
    job_lines = [line for line in lines if line.get("job") is not None]
    assert {line["logger"] for line in job_lines} >= {"runners.runtimes.run"}
    assert all((line["card"], line["role"]) == ("alpha", "operator") for line in job_lines)
    failed = [line for line in job_lines if line["level"] == "WARNING"]
    assert failed and "job 1 (operator) failed" in failed[0]["message"]
    # Lines outside the job name none.
    assert any("job" not in line for line in lines)


def test_text_stays_the_default(tmp_path: Path) -> None:
    config = _board(tmp_path, "")
    run = chatbot("run", "--until-idle", "--config", str(config))
    assert run.returncode == 0, run.stderr
    assert run.stderr and not run.stderr.lstrip().startswith("{")
    assert " INFO chatbot.app.startup: board ready" in run.stderr


def test_a_bad_log_format_names_the_key(tmp_path: Path) -> None:
    text = CONFIG.format(fake_codex=FAKE_CODEX).replace(
        'repo = "repo"\n', 'repo = "repo"\nlog_format = "yaml"\n'
    )
    with pytest.raises(ConfigError, match="bot.log_format"):
        parse_config(text, tmp_path / "bot.toml")


def _record(name: str, message: str, exc_info=None, extra=None) -> logging.LogRecord:
    logger = logging.getLogger(name)
    return logger.makeRecord(name, logging.ERROR, "f.py", 1, message, (), exc_info, extra=extra)


def test_a_traceback_and_a_multi_line_message_stay_one_line() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = _record("chatbot.x", "first\nsecond", exc_info=sys.exc_info())
    text = JsonLines().format(record)
    assert "\n" not in text
    line = json.loads(text)
    assert line["message"] == "first\nsecond"
    assert "Traceback" in line["exception"] and "ValueError: boom" in line["exception"]


def test_context_extra_and_the_transports_own_loggers() -> None:
    with about(card="alpha", transport="matrix"):
        inside = json.loads(JsonLines().format(_record("chatbot.board", "m")))
        # A call's own extra says it more precisely than the context.
        told = json.loads(JsonLines().format(_record("chatbot.board", "m", extra={"card": "b"})))
    assert (inside["card"], inside["transport"]) == ("alpha", "matrix")
    assert told["card"] == "b"
    outside = json.loads(JsonLines().format(_record("chatbot.transports.xmpp.rooms", "m")))
    assert outside["transport"] == "xmpp" and "card" not in outside
    assert current() == {}


async def test_a_task_names_its_job_for_itself_only() -> None:
    import asyncio

    async def job() -> dict:
        name_task(job=7, role="builder")
        await asyncio.sleep(0)
        return dict(current())

    assert await asyncio.create_task(job()) == {"job": 7, "role": "builder"}
    assert current() == {}  # the creator's context is untouched
