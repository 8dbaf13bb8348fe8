"""A real temporary git repository, a real store, the real worker and the fake CLIs."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatbot.app.startup import file_limits, make_worker
from chatbot.board import BoardService
from chatbot.config import Config, parse_config
from chatbot.pipeline.worker import Worker
from chatbot.store import Store

BIN = Path(__file__).resolve().parents[1] / "bin"
# The engine a test runs on (tests/pipeline/conftest.py sets it per test).
DATABASE: Any = None

# The stand-in CLIs of tests/bin, told where the test's scenario, state and log are.
STAND_IN_RUNTIMES = """
[runtimes.codex]
binary = "{bin}/codex"
pass_env = ["FAKE_CLI_SCENARIO", "FAKE_CLI_STATE", "FAKE_CLI_LOG"]
[runtimes.claude]
binary = "{bin}/claude"
pass_env = ["FAKE_CLI_SCENARIO", "FAKE_CLI_STATE", "FAKE_CLI_LOG"]
"""

CONFIG = (
    """
[bot]
owners = ["owner@example.org"]
# The scripted stand-ins read and write test files outside any worktree: no sandbox.
sandbox = "off"
database = "board.sqlite3"
repo = "repo"
workspaces = "workspaces"

"""
    + STAND_IN_RUNTIMES
    + """
[lanes.light]
runtime = "codex"
model = "gpt-5-codex-mini"
reasoning_effort = "medium"
iteration_limit = 5
concurrency = 2
timeout_s = 30
idle_timeout_s = 30
[lanes.heavy]
runtime = "claude"
model = "claude-opus-4-1"
reasoning_effort = ""
iteration_limit = 5
concurrency = 1
timeout_s = 30
idle_timeout_s = 30

[roles.operator]
timeout_s = 30
[roles.planner]
timeout_s = 30
[roles.reviewer]
runtime = "claude"
model = "claude-sonnet-4-5"
timeout_s = 30
[roles.researcher]
timeout_s = 30
[roles.inspector]
timeout_s = 30
[roles.synthesis]
timeout_s = 30

[escalation.models]
codex = ["gpt-5-codex", "gpt-5-codex-max"]
claude = ["claude-sonnet-4-5", "claude-opus-4-1"]
"""
)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def make_repo(root: Path, intents: dict[str, str]) -> Path:
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test Owner")
    git(repo, "config", "user.email", "owner@example.org")
    (repo / "README.md").write_text("# demo\n")
    for slug, text in intents.items():
        path = repo / "docs" / "intent" / f"{slug}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    return repo


def operator_answer(decision: dict[str, Any]) -> str:
    base = {
        "schema_version": 1,
        "reason": "small and clear",
        "recommended_lane": None,
        "runtime": None,
        "model": None,
        "reasoning_effort": None,
        "human_action": None,
        "escalation": [],
        "children": [],
    }
    base.update(decision)
    return "===OPERATOR-DECISION===\n" + json.dumps(base) + "\n===END-OPERATOR-DECISION==="


def direct(lane: str = "light", escalation: list[dict[str, Any]] | None = None) -> str:
    runtime, model, effort = (
        ("codex", "gpt-5-codex-mini", "medium")
        if lane == "light"
        else ("claude", "claude-opus-4-1", None)
    )
    return operator_answer(
        {
            "decision": "direct_builder",
            "recommended_lane": lane,
            "runtime": runtime,
            "model": model,
            "reasoning_effort": effort,
            "escalation": escalation or [],
        }
    )


def child(slug: str, wave: int, blocked_by: list[str], scope: str | None = None) -> dict[str, Any]:
    """One operator split child on the light lane, as the operator contract wants it."""
    return {
        "slug": slug,
        "title": f"Part {slug}",
        "wave": wave,
        "blocked_by": blocked_by,
        "recommended_lane": "light",
        "runtime": "codex",
        "model": "gpt-5-codex-mini",
        "reasoning_effort": "medium",
        "write_scope": [scope or f"src/{slug}/**"],
        "acceptance_criteria": [f"{slug} works"],
        "intent_markdown": f"# Part {slug}\n\nDo {slug}.\n",
        "escalation": [],
    }


def builder_answer(subject: str = "Add the feature", report: str = "Done; tests pass.") -> str:
    return (
        f"===COMMIT-MESSAGE===\n{subject}\n===END-COMMIT-MESSAGE===\n"
        f"===BUILDER-REPORT===\n{report}\n===END-BUILDER-REPORT==="
    )


def review_answer(decision: str = "approve", report: str = "Looks right.") -> str:
    verdict = {"schema_version": 1, "commit_hash": "{{HEAD}}", "decision": decision}
    return (
        f"===REVIEW-REPORT===\n# Review\n\n{report}\n===END-REVIEW-REPORT===\n"
        f"===REVIEW-RESULT===\n{json.dumps(verdict)}\n===END-REVIEW-RESULT==="
    )


def synthesis_answer(
    children: list[str], gaps: list[str] | None = None, report: str = "Both parts are in."
) -> str:
    verdict = {"schema_version": 1, "children": children, "gaps": gaps or []}
    return (
        f"===SYNTHESIS-REPORT===\n# Synthesis\n\n{report}\n===END-SYNTHESIS-REPORT===\n"
        f"===SYNTHESIS-RESULT===\n{json.dumps(verdict)}\n===END-SYNTHESIS-RESULT==="
    )


@dataclass
class Harness:
    root: Path
    repo: Path
    config: Config
    store: Store
    board: BoardService
    worker: Worker
    log: Path

    async def run_until_idle(self) -> None:
        await self.worker.run(until_idle=True)

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def prompts_of(self, marker: str) -> list[str]:
        return [c.get("stdin", "") for c in self.calls() if marker in c.get("stdin", "")]


async def start(
    root: Path,
    turns: list[dict[str, Any]],
    intents: dict[str, str],
    *,
    extra_config: str = "",
    monkeypatch,
    edit: Callable[[str], str] = lambda text: text,
) -> Harness:
    repo = make_repo(root, intents)
    scenario = root / "scenario.json"
    scenario.write_text(json.dumps({"turns": turns}))
    log = root / "calls.jsonl"
    monkeypatch.setenv("FAKE_CLI_SCENARIO", str(scenario))
    monkeypatch.setenv("FAKE_CLI_STATE", str(root / "scenario.state.json"))
    monkeypatch.setenv("FAKE_CLI_LOG", str(log))
    return await open_harness(root, repo, edit(CONFIG.format(bin=BIN)) + extra_config, log)


async def open_harness(root: Path, repo: Path, text: str, log: Path) -> Harness:
    """The store, board and worker for configuration `text`, written to root/bot.toml."""
    config_path = root / "bot.toml"
    if DATABASE is not None:
        text = text.replace('database = "board.sqlite3"\n', DATABASE.toml(), 1)
    config_path.write_text(text)
    config = parse_config(text, config_path)
    store = await Store.open(config.bot.database, password_file=config.bot.database_password_file)
    board = BoardService(
        store,
        config.bot.repo,
        default_lane="light",
        deploy_configured=bool(config.deploy and config.deploy.command),
        budgets=config.budgets(),
        files=file_limits(config),
    )
    await board.import_cards()
    worker = make_worker(config, board, instance_id=uuid.uuid4().hex, poll_s=0.5)
    return Harness(root, repo, config, store, board, worker, log)


def env_without_fake() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("FAKE_CLI")}
