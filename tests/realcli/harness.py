"""The pipeline harness (real store, worker, git) with the real CLIs and loopback models.

Both runtimes are configured, each with `base_url` pointing at its scripted
provider and `api_key_file` holding the key that provider expects, so a run that
reaches a provider went through the bot's own configuration path. Every role and
the light lane run on the CLI under test; the heavy lane uses the other one.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatbot.store import telemetry
from runners.process import default_base_env
from runners.runtimes import RunRequest
from tests.pipeline.harness import Harness, child, make_repo, open_harness, operator_answer
from tests.realcli.anthropic_messages import MessagesModel
from tests.realcli.openai_responses import ResponsesModel
from tests.realcli.providers import Say, ScriptedModel, Seen

OWNER = "owner@example.org"
CODEX_KEY = "codex-loopback-key-5f1c"
CLAUDE_KEY = "claude-loopback-key-9a7e"
# Model names the pinned CLIs know (codex offers its shell tool as `exec_command`).
MODELS = {"codex": ("gpt-5.5", "medium"), "claude": ("claude-sonnet-4-5", "")}
OTHER = {"codex": "claude", "claude": "codex"}
ROLES = ("operator", "planner", "reviewer", "researcher", "inspector", "synthesis")

CONFIG = """
[bot]
owners = ["{owner}"]
database = "board.sqlite3"
repo = "repo"
workspaces = "workspaces"

[runtimes.codex]
binary = "{codex_bin}"
base_url = "{codex_url}"
api_key_file = "secrets/codex-key"
env = {{ HOME = "./home/codex" }}
[runtimes.claude]
binary = "{claude_bin}"
base_url = "{claude_url}"
api_key_file = "secrets/claude-key"
env = {{ HOME = "./home/claude", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1" }}

[lanes.light]
runtime = "{cli}"
model = "{model}"
reasoning_effort = "{effort}"
iteration_limit = 5
timeout_s = 90
idle_timeout_s = 90
[lanes.heavy]
runtime = "{other}"
model = "{other_model}"
reasoning_effort = "{other_effort}"
iteration_limit = 5
{roles}
[escalation.models]
codex = ["gpt-5.5", "gpt-6-luna"]
claude = ["claude-sonnet-4-5"]
"""

ROLE = """
[roles.{role}]
runtime = "{cli}"
model = "{model}"
timeout_s = 90
idle_timeout_s = 90
"""


def write_secrets(root: Path) -> None:
    secrets = root / "secrets"
    secrets.mkdir(exist_ok=True)
    (secrets / "codex-key").write_text(CODEX_KEY + "\n")
    (secrets / "claude-key").write_text(CLAUDE_KEY + "\n")


def config_text(
    cli: str,
    bins: dict[str, Path],
    codex_url: str,
    claude_url: str,
    role_runtimes: dict[str, str] | None = None,
) -> str:
    """Every role on `cli` unless `role_runtimes` moves one to the other CLI."""
    model, effort = MODELS[cli]
    other = OTHER[cli]
    runtimes = {role: cli for role in ROLES} | (role_runtimes or {})
    roles = "".join(
        ROLE.format(role=role, cli=runtime, model=MODELS[runtime][0])
        for role, runtime in runtimes.items()
    )
    return CONFIG.format(
        owner=OWNER,
        codex_bin=bins["codex"],
        claude_bin=bins["claude"],
        codex_url=codex_url,
        claude_url=claude_url,
        cli=cli,
        model=model,
        effort=effort,
        other=other,
        other_model=MODELS[other][0],
        other_effort=MODELS[other][1],
        roles=roles,
    )


@dataclass
class RealHarness:
    """The pipeline harness plus the provider the CLI under test talks to."""

    h: Harness
    cli: str
    model: ScriptedModel
    # both providers, by runtime name, for a pipeline that uses both CLIs
    models: dict[str, ScriptedModel]

    async def run_until_idle(self, timeout: float = 120.0) -> None:
        await asyncio.wait_for(self.h.run_until_idle(), timeout)

    async def runs(self, slug: str) -> list[telemetry.RunRecord]:
        """The card's runs, oldest first."""
        card = await self.h.board.card(slug)
        runs = await telemetry.for_card(self.h.store.reader, card.id)
        return sorted(runs, key=lambda run: run.created_at)


async def start_real(
    root: Path,
    cli: str,
    bins: dict[str, Path],
    codex_model: ResponsesModel,
    claude_model: MessagesModel,
    intents: dict[str, str],
    *,
    role_runtimes: dict[str, str] | None = None,
    extra_config: str = "",
) -> RealHarness:
    repo = make_repo(root, intents)
    write_secrets(root)
    for name in ("codex", "claude"):
        (root / "home" / name).mkdir(parents=True)
    text = config_text(cli, bins, codex_model.base_url, claude_model.base_url, role_runtimes)
    text += extra_config
    h = await open_harness(root, repo, text, root / "no-fake-cli-log.jsonl")
    models: dict[str, ScriptedModel] = {"codex": codex_model, "claude": claude_model}
    return RealHarness(h, cli, models[cli], models)


def direct(cli: str) -> str:
    """The operator's direct_builder decision for the light lane of the CLI under test."""
    model, effort = MODELS[cli]
    return operator_answer(
        {
            "decision": "direct_builder",
            "recommended_lane": "light",
            "runtime": cli,
            "model": model,
            "reasoning_effort": effort or None,
        }
    )


def split_child(cli: str, slug: str, wave: int, blocked_by: list[str]) -> dict[str, Any]:
    """An operator split child on the light lane of the CLI under test."""
    model, effort = MODELS[cli]
    found = child(slug, wave, blocked_by, f"{slug}/**")
    return {**found, "runtime": cli, "model": model, "reasoning_effort": effort or None}


def review_of(commit: str, decision: str = "approve", report: str = "Looks right.") -> str:
    verdict = {"schema_version": 1, "commit_hash": commit, "decision": decision}
    return (
        f"===REVIEW-REPORT===\n# Review\n\n{report}\n===END-REVIEW-REPORT===\n"
        f"===REVIEW-RESULT===\n{json.dumps(verdict)}\n===END-REVIEW-RESULT==="
    )


def judge_the_commit_in_the_prompt(seen: Seen) -> Say:
    """A reviewer that approves the commit its prompt names (a 40-hex hash)."""
    found = re.search(r"\b[0-9a-f]{40}\b", seen.prompt)
    return Say(review_of(found[0] if found else "no-commit-in-the-prompt"))


def run_request(
    cli: str,
    bins: dict[str, Path],
    model: ScriptedModel,
    root: Path,
    cwd: Path,
    prompt: str,
    **fields: Any,
) -> RunRequest:
    """A runner-level request to the CLI under test, reaching `model` through base_url."""
    write_secrets(root)
    return RunRequest(
        binary=str(bins[cli]),
        cwd=cwd,
        prompt=prompt,
        model=MODELS[cli][0],
        base_url=model.base_url,
        api_key_file=root / "secrets" / f"{cli}-key",
        **fields,
    )


def child_env(home: Path) -> dict[str, str]:
    """What the bot gives a CLI by default, with a home of the test's own."""
    home.mkdir(parents=True, exist_ok=True)
    env = default_base_env()
    env["HOME"] = str(home)
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    return env
