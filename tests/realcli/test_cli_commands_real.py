"""The operator's CLI without chat: start, answer, split, cancel, runs, run --until-idle,
each a `chatbot` process of its own, with the agents the real codex on a loopback model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.inprocess import in_thread
from tests.pipeline.harness import builder_answer, make_repo, operator_answer
from tests.realcli.clis import CLIS
from tests.realcli.harness import (
    config_text,
    direct,
    judge_the_commit_in_the_prompt,
    write_secrets,
)
from tests.realcli.providers import Say, ScriptedModel, WriteFile


def _setup(tmp_path: Path, bins: dict[str, Path], models: dict[str, ScriptedModel]) -> Path:
    make_repo(tmp_path, {"greeting": "# Greeting\n\nSay hello.\n"})
    write_secrets(tmp_path)
    for name in CLIS:
        (tmp_path / "home" / name).mkdir(parents=True)
    config = tmp_path / "bot.toml"
    urls = {name: model.base_url for name, model in models.items()}
    config.write_text(config_text("codex", bins, urls))
    return config


async def cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`chatbot` in a thread: the loop the loopback model answers on keeps running."""
    return await in_thread(*args, "--config", str(config))


async def test_cli_drives_a_card_through_a_question_to_review(
    cli_bins, models, responses_model, tmp_path: Path
) -> None:
    question = operator_answer(
        {"decision": "needs_human", "reason": "unclear", "human_action": "English or German?"}
    )

    responses_model.script(
        Say(question),
        Say(direct("codex")),
        WriteFile("hello.txt", "hello\n"),
        Say(builder_answer("Add hello")),
        judge_the_commit_in_the_prompt,
    )
    config = _setup(tmp_path, cli_bins, models)
    assert (await cli(config, "run", "--until-idle")).returncode == 0  # imports the intent

    refused = await cli(config, "answer", "greeting", "too early")
    assert refused.returncode == 1 and "no open question" in refused.stderr
    started = await cli(config, "start", "greeting")
    assert started.returncode == 0 and "operator running" in started.stdout
    runs = await cli(config, "runs")
    assert "queued" in runs.stdout and "operator" in runs.stdout and "role:operator" in runs.stdout
    again = await cli(config, "start", "greeting")
    assert again.returncode == 1
    assert "phase operator_running" in again.stderr and "allowed: answer" not in again.stderr

    await cli(config, "run", "--until-idle")
    card = json.loads((await cli(config, "card", "greeting", "--json")).stdout)
    assert card["phase"] == "needs_human"
    answered = await cli(config, "answer", "greeting", "English, please")
    assert answered.returncode == 0, answered.stderr
    done = await cli(config, "run", "--until-idle")
    assert done.returncode == 0, done.stderr
    card = json.loads((await cli(config, "card", "greeting", "--json")).stdout)
    assert card["phase"] == "ready_for_deployment" and card["review_decision"] == "approve"
    assert (await cli(config, "runs")).stdout.strip() == "no job is queued or running"
    assert "English, please" in responses_model.seen[1].prompt


async def test_cli_cancel_and_split_refusals(
    cli_bins, models, responses_model, tmp_path: Path
) -> None:
    config = _setup(tmp_path, cli_bins, models)
    await cli(config, "run", "--until-idle")
    assert (await cli(config, "start", "greeting")).returncode == 0
    cancelled = await cli(config, "cancel", "greeting")
    assert cancelled.returncode == 0 and "planned" in cancelled.stdout
    assert (await cli(config, "runs")).stdout.strip() == "no job is queued or running"
    unknown = await cli(config, "split", "greting")
    assert unknown.returncode == 1 and "did you mean greeting" in unknown.stderr
    split = await cli(config, "split", "greeting")
    assert split.returncode == 0 and "split requested" in split.stdout
    assert responses_model.seen == []  # nothing ran: every run was cancelled or not started
