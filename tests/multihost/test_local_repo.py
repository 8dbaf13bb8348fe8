"""Two `chatbot worker` processes on one host sharing a local repository (issue 34).

Both name the same `[bot] repo` folder and no remote, each with workspaces of its
own, on one SQLite board. git lets a branch be checked out in one worktree only, so
the worker that claims a card's job takes over the card's worktree from wherever
the other worker left it (with the work in it), instead of failing with "'card/x' is
already checked out at ...". One worker runs after the other, so which worker runs
which job is not left to chance.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from tests.inprocess import chatbot as main_of_chatbot
from tests.pipeline.harness import (
    BIN,
    STAND_IN_RUNTIMES,
    builder_answer,
    direct,
    git,
    make_repo,
    review_answer,
)

SLUG = "shared-card"
CONFIG = (
    """
[bot]
owners = ["owner@example.org"]
# The scripted stand-ins read and write test files outside any worktree: no sandbox.
sandbox = "off"
database = "../board.sqlite3"
repo = "../repo"
workspaces = "workspaces"
"""
    + STAND_IN_RUNTIMES
    + """
[lanes.light]
runtime = "codex"
model = "gpt-5-codex-mini"
reasoning_effort = "medium"
iteration_limit = 5
concurrency = 1
timeout_s = 60
idle_timeout_s = 60

[roles.reviewer]
runtime = "claude"
model = "claude-sonnet-4-5"
timeout_s = 60
"""
)


def chatbot(root: Path, scenario: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "FAKE_CLI_SCENARIO": str(root / f"{scenario}.json"),
        "FAKE_CLI_STATE": str(root / f"{scenario}.state.json"),
        "FAKE_CLI_LOG": str(root / "calls.jsonl"),
    }
    return main_of_chatbot(*args, env=env)


def worker_config(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir()
    path = folder / "worker.toml"
    path.write_text(CONFIG.format(bin=BIN))
    return path


def phase(root: Path) -> str:
    with sqlite3.connect(root / "board.sqlite3") as db:
        return db.execute("SELECT phase FROM cards WHERE slug = ?", (SLUG,)).fetchone()[0]


def test_a_second_worker_on_the_same_local_repository_takes_over_the_cards_worktree(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path, {SLUG: "# Shared card\n\nMake it.\n"})
    first, second = worker_config(tmp_path, "a"), worker_config(tmp_path, "b")
    operator = {"match": "OPERATOR-DECISION", "repeat": True, "answer": direct("light")}
    # Worker a: the builder works but never finishes: the card waits for the owner,
    # its uncommitted work in a's worktree of card/shared-card.
    unfinished = {"cli": "codex", "repeat": True, "answer": "Still on it.", "files": {"wip": "a\n"}}
    (tmp_path / "a.json").write_text(json.dumps({"turns": [operator, unfinished]}))
    started = chatbot(tmp_path, "a", "start", SLUG, "--config", str(first))
    assert started.returncode == 0, started.stderr
    ran = chatbot(tmp_path, "a", "worker", "--until-idle", "--config", str(first))
    assert phase(tmp_path) == "planning_with_feedback", ran.stdout + ran.stderr
    assert (tmp_path / "a" / "workspaces" / SLUG / "wip").read_text() == "a\n"

    # Worker b: the owner starts the card again; b builds and reviews it.
    finished = {
        "match": f"`card/{SLUG}`",
        "cli": "codex",
        "answer": builder_answer("Make it"),
        "files": {"done": "b\n"},
    }
    review = {"match": "REVIEW-RESULT", "answer": review_answer("approve")}
    (tmp_path / "b.json").write_text(json.dumps({"turns": [operator, finished, review]}))
    started = chatbot(tmp_path, "b", "start", SLUG, "--config", str(second))
    assert started.returncode == 0, started.stderr
    ran = chatbot(tmp_path, "b", "worker", "--until-idle", "--config", str(second))
    said = ran.stdout + ran.stderr
    assert "already checked out" not in said
    assert ran.returncode == 0, said
    assert phase(tmp_path) == "ready_for_deployment", said
    # The worktree moved with a's work in it, and b's commit holds both.
    worktree = tmp_path / "b" / "workspaces" / SLUG
    assert not (tmp_path / "a" / "workspaces" / SLUG).exists()
    assert git(repo, "show", f"card/{SLUG}:wip") == "a"
    assert git(repo, "show", f"card/{SLUG}:done") == "b"
    listed = git(repo, "worktree", "list", "--porcelain")
    assert f"worktree {worktree}\n" in listed + "\n", listed
