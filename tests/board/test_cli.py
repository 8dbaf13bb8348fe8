"""The `chatbot` command as a user runs it: a real process, real files."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

import pytest

from chatbot.domain.transitions import Action, By
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from runners.versions import TESTED
from tests.inprocess import chatbot, in_thread

FAKE_CODEX = str(Path(__file__).resolve().parents[1] / "bin" / "codex")

CONFIG = """
[bot]
owners = ["owner@example.org"]
# The scripted stand-ins read and write test files outside any worktree: no sandbox.
sandbox = "off"
database = "var/board.sqlite3"
repo = "repo"
[runtimes.codex]
binary = "{fake_codex}"
[lanes.light]
runtime = "codex"
model = "gpt-5-codex-mini"
iteration_limit = 10
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    intents = tmp_path / "repo" / "docs" / "intent"
    intents.mkdir(parents=True)
    (intents / "alpha.md").write_text("# Alpha\n")
    (intents / "beta.md").write_text("# Beta\n")
    (intents / "Not A Slug.md").write_text("# x\n")
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    path = tmp_path / "bot.toml"
    path.write_text(CONFIG.format(fake_codex=FAKE_CODEX))
    return path


def test_check_prints_the_effective_config(config: Path) -> None:
    result = chatbot("check", "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert "configuration OK" in result.stdout
    assert str(config.parent / "var" / "board.sqlite3") in result.stdout
    # The test repo has two importable files and one bad name.
    assert "2 intent files, 1 not importable" in result.stdout
    assert "NOT a git repository" not in result.stdout
    assert f"runtime codex: {FAKE_CODEX} found, version " in result.stdout


def test_check_names_a_missing_agent_cli_and_fails(config: Path) -> None:
    config.write_text(config.read_text().replace(FAKE_CODEX, "no-such-codex-cli"))
    result = chatbot("check", "--config", str(config))
    assert result.returncode == 1
    assert "runtime codex: no-such-codex-cli NOT found" in result.stdout
    assert "set runtimes.codex.binary" in result.stdout
    # Without connecting too: no run could start without it.
    local = chatbot("check", "--no-connect", "--config", str(config))
    assert local.returncode == 1 and "no-such-codex-cli NOT found" in local.stdout


def test_check_says_when_a_cli_is_older_than_the_tested_version(
    config: Path, tmp_path: Path
) -> None:
    old = tmp_path / "old-codex"
    old.write_text("#!/bin/sh\necho 'codex-cli 0.1.0'\n")
    old.chmod(0o755)
    config.write_text(config.read_text().replace(FAKE_CODEX, str(old)))
    result = chatbot("check", "--config", str(config))
    tested = TESTED["codex"][1]
    assert f"runtime codex: {old} found, version 0.1.0, OLDER than the tested {tested}" in (
        result.stdout
    )
    assert f"npm install -g @openai/codex@{tested}" in result.stdout
    assert result.returncode == 0  # older works, it is only not what was tested


def test_check_fails_with_exit_2_naming_the_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    text = CONFIG.format(fake_codex=FAKE_CODEX)
    bad.write_text(text.replace("iteration_limit = 10", "iteration_limit = 10\nspeed = 3"))
    result = chatbot("check", "--config", str(bad))
    assert result.returncode == 2
    assert f"{bad}: lanes.light.speed: unknown key" in result.stderr
    # No configuration at all: the embedded console demo, which is valid.
    demo = chatbot("check", "--no-connect", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert "using the console demo" in demo.stderr and "transports: console" in demo.stdout


def test_run_imports_and_cards_shows_the_board(config: Path) -> None:
    run = chatbot("run", "--until-idle", "--config", str(config))
    assert run.returncode == 0, run.stderr
    assert "not imported: docs/intent/Not A Slug.md" in run.stderr
    text = chatbot("cards", "--config", str(config))
    assert "planned: 2" in text.stdout and "alpha" in text.stdout
    data = json.loads(chatbot("cards", "--config", str(config), "--json").stdout)
    assert data["schema_version"] == 1
    assert [c["slug"] for c in data["cards"]] == ["alpha", "beta"]
    assert set(data["cards"][0]) == {
        "slug",
        "kind",
        "title",
        "phase",
        "lane",
        "parent",
        "children",
        "blocked_by",
        "commit",
        "review_decision",
        "deployment_status",
        "pipeline_run_id",
        "acceptance_criteria",
        "failure",
        "ways_forward",
        "checks",
        "attachments",
        "events",
    }
    assert data["cards"][0]["ways_forward"] == []  # nothing failed


def test_card_shows_history_and_suggests_close_slugs(config: Path) -> None:
    chatbot("run", "--until-idle", "--config", str(config))
    card = json.loads(chatbot("card", "alpha", "--config", str(config), "--json").stdout)
    assert card["phase"] == "planned"
    assert card["events"][0]["action"] == "import" and card["events"][0]["to"] == "planned"
    text = chatbot("card", "alpha", "--config", str(config))
    # The same text as /status and /log in chat, uncut.
    assert (
        "History of alpha (1 event):" in text.stdout and "kind intent, phase planned" in text.stdout
    )
    missing = chatbot("card", "alpah", "--config", str(config))
    assert missing.returncode == 1 and "did you mean alpha" in missing.stderr


def test_german_locale_labels_the_phases(config: Path) -> None:
    config.write_text(
        CONFIG.format(fake_codex=FAKE_CODEX).replace(
            'repo = "repo"', 'repo = "repo"\nlocale = "de"'
        )
    )
    chatbot("run", "--until-idle", "--config", str(config))
    assert "geplant: 2" in chatbot("cards", "--config", str(config)).stdout


def test_version_and_options_before_or_after_the_command(config: Path) -> None:
    version = chatbot("--version")
    assert version.returncode == 0 and version.stdout.startswith("chatbot 0.")
    before = chatbot("--config", str(config), "cards")
    after = chatbot("cards", "--config", str(config))
    assert before.returncode == after.returncode == 0, before.stderr
    assert before.stdout == after.stdout and "alpha" in before.stdout
    assert chatbot("-v", "--config", str(config), "cards", "--json").returncode == 0


def test_every_subcommand_says_what_it_does() -> None:
    from chatbot.app.cli import _parser

    parser = _parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, command in sub.choices.items():
        assert command.description and len(command.description) > 10, name


def test_card_commands_come_from_the_chat_command_table(config: Path) -> None:
    archived = chatbot("archive", "beta", "--config", str(config))
    assert archived.returncode == 0 and "beta: archived" in archived.stdout
    inspected = chatbot("inspect", "alpha", "route", "--config", str(config))
    assert inspected.returncode == 0, inspected.stderr
    jobs = json.loads(chatbot("runs", "--json", "--config", str(config)).stdout)
    assert jobs["schema_version"] == 1
    [job] = jobs["jobs"]
    assert (job["kind"], job["card"], job["state"], job["runtime"]) == (
        "inspector",
        "alpha",
        "queued",
        "codex",
    )
    assert set(job) == {"id", "state", "kind", "card", "lane", "runtime", "host", "age_s"}
    assert job["host"] is None  # queued: no host runs it yet
    refused = chatbot("deploy", "alpha", "--config", str(config))
    assert refused.returncode == 1 and "phase inspector_running" in refused.stderr


# --- files that are not what they seem (issue 23) --------------------------------

WEB = '[web]\nlisten = "127.0.0.1:8099"\ntoken_file = "token"\n'


def _latin1_config(config: Path) -> str:
    lines = config.read_text().count("\n")
    config.write_bytes(config.read_bytes() + "# Grüße\n".encode("latin-1"))
    return f"line {lines + 1}: not UTF-8 text"


def _latin1_secret(config: Path) -> str:
    (config.parent / "token").write_bytes(b"caf\xe9-a-long-enough-token\n")
    return "web.token_file: secret file"


def _fifo_secret(config: Path) -> str:
    # Nobody ever writes to it: reading it would wait forever.
    (config.parent / "token").unlink()
    os.mkfifo(config.parent / "token")
    return "web.token_file: secret file"


def _database_folder(config: Path) -> str:
    (config.parent / "var" / "board.sqlite3").mkdir(parents=True)
    return "bot.database:"


def _port_out_of_range(config: Path) -> str:
    config.write_text(config.read_text().replace("127.0.0.1:8099", "127.0.0.1:99999"))
    return "web.listen: port 99999"


@pytest.mark.parametrize(
    "spoil",
    [_latin1_config, _latin1_secret, _fifo_secret, _database_folder, _port_out_of_range],
)
@pytest.mark.parametrize("command", [["check"], ["check", "--no-connect"], ["run"]])
def test_a_file_that_is_not_what_it_seems_is_one_line_and_exit_2(
    config: Path, spoil, command: list[str]
) -> None:
    (config.parent / "token").write_text("a-long-enough-token-1234\n")
    config.write_text(config.read_text() + WEB)
    named = spoil(config)
    # Bounded: a FIFO used to hang `check` and `run` (a hang must fail, not stall the suite).
    result = chatbot(*command, "--config", str(config))
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"chatbot: {config}: {named}"), line


async def test_a_card_whose_worker_died_names_its_ways_on(config: Path) -> None:
    config.write_text(
        config.read_text().replace('repo = "repo"', 'repo = "repo"\ncommand_prefixes = ["!", "/"]')
    )
    assert (
        await in_thread("cards", "--config", str(config))
    ).returncode == 0  # imports the intents
    store = await Store.open(config.parent / "var" / "board.sqlite3")
    try:
        async with store.transaction() as db:
            await card_store.transition(db, "alpha", Action.START, actor="t", by=By.OWNER)
            card = await card_store.transition(
                db, "alpha", Action.OPERATOR_DIRECT, actor="t", by=By.SYSTEM
            )
            job, _ = await job_store.enqueue(db, kind="builder", lane="light", card_id=card.id)
            # A worker took the build and died with it: its lease ran out a minute ago.
            await job_store.claim(db, "light", "dead-worker", -60)
    finally:
        await store.close()

    recovered = await in_thread("run", "--until-idle", "--config", str(config))
    assert (
        f"recovered job {job.id} (builder): the worker stopped during this builder run "
        "(attempt 1); its result is unknown; alpha is failed: /retry alpha or /fix alpha"
    ) in recovered.stderr
    data = json.loads((await in_thread("card", "alpha", "--json", "--config", str(config))).stdout)
    assert data["phase"] == "failed" and data["failure"]["stage"] == "builder"
    # The ways on as the chat says them, written with the first configured prefix.
    assert data["ways_forward"] == [
        {"action": "retry", "command": "!retry alpha", "text": "runs the failed step again"},
        {"action": "fix", "command": "!fix alpha", "text": "starts a repair run"},
    ]
    text = (await in_thread("card", "alpha", "--config", str(config))).stdout
    assert "ways on: !retry alpha runs the failed step again; !fix alpha starts a repair run" in (
        text
    )
    # Issue 34: the history in words for a person; the codes stay in --json for scripts.
    assert "building [operator chose to build directly by t]" in text
    assert "operator_direct" not in text
    assert [e["action"] for e in data["events"]][1:3] == ["start", "operator_direct"]
    # ...and the first of them works.
    retried = await in_thread("retry", "alpha", "--config", str(config))
    assert retried.returncode == 0 and "alpha: building" in retried.stdout, retried.stderr


def test_inbox_and_why_in_the_shell(config: Path) -> None:
    chatbot("run", "--until-idle", "--config", str(config))
    inbox = json.loads(chatbot("inbox", "--config", str(config), "--json").stdout)
    assert inbox == {"schema_version": 1, "items": []}
    assert chatbot("inbox", "--config", str(config)).stdout.strip() == "Nothing waits for you."
    why = json.loads(chatbot("why", "alpha", "--config", str(config), "--json").stdout)
    assert set(why) == {"schema_version", "card", "phase", "hold", "facts", "ways", "text"}
    assert (why["card"], why["hold"], why["ways"]) == ("alpha", "start", ["/start alpha"])
    assert why["text"] == "alpha is planned and waits for you to start it. Way on: /start alpha."
    missing = chatbot("why", "alpah", "--config", str(config))
    assert missing.returncode == 1 and "did you mean alpha" in missing.stderr


def test_why_without_a_slug_in_the_shell_says_its_usage(config: Path) -> None:
    missing = chatbot("why", "--config", str(config))
    assert missing.returncode == 2
    assert "usage: chatbot why" in missing.stderr and "required: slug" in missing.stderr
    assert "Traceback" not in missing.stderr
