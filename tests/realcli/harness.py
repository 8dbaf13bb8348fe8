"""The pipeline harness (real store, worker, git) with the real CLIs and loopback models.

Every CLI of tests/realcli/clis/ is configured, each with `base_url` pointing at its
scripted provider and `api_key_file` holding the key that provider expects, so a run
that reaches a provider went through the bot's own configuration path. Every role and
the light lane run on the CLI under test; the heavy lane uses another one.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatbot.store import telemetry
from runners.process import default_base_env
from runners.runtimes import RUNTIMES, RunRequest
from runners.workspace import agent_home
from tests.pipeline.harness import Harness, child, make_repo, open_harness, operator_answer
from tests.realcli.clis import CLIS
from tests.realcli.providers import Say, ScriptedModel, Seen

OWNER = "owner@example.org"
# Each CLI's model for its lanes and roles, and its light lane's effort.
MODELS = {name: (cli.models[0], cli.effort) for name, cli in CLIS.items()}
ROLES = ("operator", "planner", "reviewer", "researcher", "inspector", "synthesis")

CONFIG = """
[bot]
owners = ["{owner}"]
database = "board.sqlite3"
repo = "repo"
workspaces = "workspaces"
{runtimes}
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
{escalation}
"""

RUNTIME = """
[runtimes.{name}]
binary = "{binary}"
base_url = "{url}"
api_key_file = "secrets/{name}-key"
env = {{ {env} }}
"""

ROLE = """
[roles.{role}]
runtime = "{cli}"
model = "{model}"
timeout_s = 90
idle_timeout_s = 90
"""


def other(cli: str) -> str:
    """The CLI of the heavy lane when `cli` is under test: the next one."""
    names = list(CLIS)
    return names[(names.index(cli) + 1) % len(names)]


def binary(bins: Mapping[str, Path], cli: str) -> Path:
    """The installed program a runtime runs (`Cli.command`)."""
    return bins[RUNTIMES[cli].cli.command]


def write_secrets(root: Path) -> None:
    secrets = root / "secrets"
    secrets.mkdir(exist_ok=True)
    for name, cli in CLIS.items():
        (secrets / f"{name}-key").write_text(cli.key + "\n")


def _env(name: str, extra: Mapping[str, str] | None = None) -> str:
    values = {"HOME": f"./home/{name}", **CLIS[name].env, **(extra or {})}
    return ", ".join(f"{key} = {json.dumps(value)}" for key, value in values.items())


def config_text(
    cli: str,
    bins: Mapping[str, Path],
    urls: Mapping[str, str],
    role_runtimes: dict[str, str] | None = None,
    runtime_env: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """Every role on `cli` unless `role_runtimes` moves one to another CLI; `runtime_env`
    adds to a runtime's `env`."""
    model, effort = MODELS[cli]
    heavy = other(cli)
    runtimes = {role: cli for role in ROLES} | (role_runtimes or {})
    roles = "".join(
        ROLE.format(role=role, cli=runtime, model=MODELS[runtime][0])
        for role, runtime in runtimes.items()
    )
    sections = "".join(
        RUNTIME.format(
            name=name,
            binary=binary(bins, name),
            url=urls[name],
            env=_env(name, (runtime_env or {}).get(name)),
        )
        for name in CLIS
    )
    escalation = "".join(f"{name} = {json.dumps(list(c.models))}\n" for name, c in CLIS.items())
    return CONFIG.format(
        owner=OWNER,
        runtimes=sections,
        cli=cli,
        model=model,
        effort=effort,
        other=heavy,
        other_model=MODELS[heavy][0],
        other_effort=MODELS[heavy][1],
        roles=roles,
        escalation=escalation,
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

    def sessions(self) -> set[str | None]:
        """The session ids the CLI under test used, as it shows them (tests/realcli/clis)."""
        home = agent_home(self.h.config.bot.workspaces, self.cli)
        return CLIS[self.cli].sessions(self.model, home)

    async def runs(self, slug: str) -> list[telemetry.RunRecord]:
        """The card's runs, oldest first."""
        card = await self.h.board.reads.card(slug)
        runs = await telemetry.for_card(self.h.store.reader, card.id)
        return sorted(runs, key=lambda run: run.created_at)


async def start_real(
    root: Path,
    cli: str,
    bins: Mapping[str, Path],
    models: dict[str, ScriptedModel],
    intents: dict[str, str],
    *,
    role_runtimes: dict[str, str] | None = None,
    extra_config: str = "",
    bot_config: str = "",
    light_config: str = "",
    runtime_env: Mapping[str, Mapping[str, str]] | None = None,
) -> RealHarness:
    repo = make_repo(root, intents)
    write_secrets(root)
    for name in CLIS:
        (root / "home" / name).mkdir(parents=True)
    urls = {name: model.base_url for name, model in models.items()}
    text = config_text(cli, bins, urls, role_runtimes, runtime_env) + extra_config
    # Keys of sections the template opens: [bot] and the light lane.
    text = text.replace(
        'workspaces = "workspaces"\n', f'workspaces = "workspaces"\n{bot_config}', 1
    )
    text = text.replace("[lanes.light]\n", f"[lanes.light]\n{light_config}", 1)
    h = await open_harness(root, repo, text, root / "no-fake-cli-log.jsonl")
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
    bins: Mapping[str, Path],
    model: ScriptedModel,
    root: Path,
    cwd: Path,
    prompt: str,
    **fields: Any,
) -> RunRequest:
    """A runner-level request to the CLI under test, reaching `model` through base_url,
    with the home the bot would give it (`agent_home(root / "workspaces", cli)`)."""
    write_secrets(root)
    fields.setdefault("home", agent_home(root / "workspaces", cli))
    return RunRequest(
        binary=str(binary(bins, cli)),
        cwd=cwd,
        prompt=prompt,
        model=MODELS[cli][0],
        base_url=model.base_url,
        api_key_file=root / "secrets" / f"{cli}-key",
        **fields,
    )


def sessions(cli: str, model: ScriptedModel, root: Path) -> set[str | None]:
    """The session ids `cli` used in runs made with `run_request(..., root, ...)`."""
    return CLIS[cli].sessions(model, agent_home(root / "workspaces", cli))


def child_env(home: Path) -> dict[str, str]:
    """What the bot gives a CLI by default, with a home of the test's own."""
    home.mkdir(parents=True, exist_ok=True)
    env = default_base_env()
    env["HOME"] = str(home)
    for cli in CLIS.values():
        env.update(cli.env)
    return env
