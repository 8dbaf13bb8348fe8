"""[runtimes.*], [lanes.*], [roles.*] and [escalation]: which agent CLI runs what."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from chatbot.config.base import USD, Effort, EnvName, ModelName, RuntimeName, Section
from runners.profiles import ITERATION_LIMIT_MAX, ITERATION_LIMIT_MIN
from runners.runtimes.base import BASE_URL_PATTERN


class RuntimeSection(Section):
    # The agent CLI: a name on PATH, or a path (relative to this file).
    binary: str = Field(min_length=1)
    # The key the CLI sends to its model provider; read when a run starts, put only
    # into that run's environment (openrouter: required; claude: ANTHROPIC_API_KEY;
    # codex: only together with base_url).
    api_key_file: Path | None = None
    # Another model provider: an OpenAI-compatible Responses endpoint for codex and
    # openrouter (".../v1"), an Anthropic-compatible API for claude.
    base_url: str | None = Field(default=None, pattern=BASE_URL_PATTERN)
    # Names of variables of the bot's own environment the CLI also gets (its login
    # lives in e.g. CODEX_HOME); everything else is withheld from the child.
    pass_env: list[EnvName] = []
    # Plain, non-secret variables for the CLI; a value starting with ./ or ../ is a
    # path relative to this file. Secrets never go here: use api_key_file.
    env: dict[EnvName, str] = {}
    # For a CLI that reports no cost (codex): a run costs its tokens at these prices.
    usd_per_million_input_tokens: USD | None = None
    # The price of a million output tokens (with the one above).
    usd_per_million_output_tokens: USD | None = None
    # What its sandbox shows besides the worktree, the CLI and its home: folders or files
    # it reads (a scenario, a tool chain) and ones it writes (a cache). Relative paths
    # are relative to this file.
    read_paths: list[str] = []
    # Folders or files its sandbox lets it write besides its worktree and home.
    write_paths: list[str] = []

    @field_validator("read_paths", "write_paths")
    @classmethod
    def _absolute(cls, values: list[str]) -> list[str]:
        for value in values:
            if not value.startswith("/") or "\x00" in value:
                raise ValueError(f"{value!r} is not an absolute path")
        return values


class LaneSection(Section):
    # The runtime ([runtimes.NAME]) its builder and fixer runs use.
    runtime: RuntimeName
    # The model the CLI is told to use.
    model: ModelName
    reasoning_effort: Effort = ""
    iteration_limit: int = Field(ge=ITERATION_LIMIT_MIN, le=ITERATION_LIMIT_MAX)
    concurrency: int = Field(default=1, ge=1, le=16)
    timeout_s: int = Field(default=3600, ge=1, le=24 * 3600)  # per agent turn
    idle_timeout_s: int = Field(default=900, ge=1, le=24 * 3600)
    # What all runs of one card in this lane may cost; reached, no new run starts for it.
    budget_usd_per_card: USD | None = None
    # Another lane whose profile a run takes at once when this lane's provider says its
    # quota or rate limit is spent; unset: the run waits for the reset.
    fallback: str | None = None
    # What its runs' sandbox lets reach the network: only the model provider (through
    # the bot's forwarder), or everything (a builder that installs packages).
    network: Literal["provider", "open"] = "provider"


class RoleSection(Section):
    # The runtime this role's runs use (roles outside the lanes: operator, planner, ...).
    runtime: RuntimeName = "codex"
    # Its model; "": the CLI's default.
    model: ModelName = ""
    # Its reasoning effort; "": the CLI's default.
    reasoning_effort: Effort = ""
    timeout_s: int = Field(default=1200, ge=1, le=24 * 3600)
    idle_timeout_s: int = Field(default=600, ge=1, le=24 * 3600)
    # What happens when its agent asks to do what the role is not granted: the owners
    # are asked in the card's room, or the bot refuses at once. Unset: "ask" for the
    # roles that write (builder, fixer), "deny" for the others.
    approvals: Literal["ask", "deny"] | None = None


class EscalationSection(Section):
    # Per runtime, the only models an escalation step may switch to.
    models: dict[RuntimeName, list[ModelName]] = {}
