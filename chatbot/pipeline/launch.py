"""What one model run starts with, built from the configuration and the role's record.

`JobContext.run` (context.py) lays the card's files out, asks `prepare` for the launch,
runs it and records it. Building the launch awaits nothing and starts nothing: the
request in the runtime's terms, the sandbox, the environment and the limits are all
settled here, before any process exists.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from chatbot.config import Config, RuntimeSection
from chatbot.domain import roles
from chatbot.pipeline import sandboxing
from chatbot.pipeline.run_records import Profile
from runners.process import ProcessLimits, default_base_env
from runners.runtimes import Mode, RunRequest, Runtime, get_runtime
from runners.sandbox import Sandbox
from runners.workspace import agent_home


@dataclass(frozen=True)
class Launch:
    profile: Profile
    runtime: Runtime
    runtime_config: RuntimeSection
    request: RunRequest
    sandbox: Sandbox | None
    base_env: dict[str, str]
    limits: ProcessLimits


def prepare(
    config: Config,
    record: roles.Role,
    profile: Profile,
    runtime_config: RuntimeSection,
    *,
    cwd: Path,
    prompt: str,
    images: tuple[Path, ...],
    shown: tuple[Path, ...],
    resume_session_id: str,
    max_turns: int | None,
) -> Launch:
    """The launch of one run of `record`'s role with `profile`; `shown`: folders a
    read-only run may read besides its `cwd` (its attached files)."""
    # The role names what it may do; the runtime writes that in its CLI's syntax.
    runtime = get_runtime(profile.runtime)
    home = agent_home(config.bot.workspaces.absolute(), profile.runtime)
    request = RunRequest(
        binary=runtime_config.binary,
        cwd=cwd,
        prompt=prompt,
        images=images,
        mode=Mode.WORKSPACE_WRITE if record.writes else Mode.READ_ONLY,
        model=profile.model,
        reasoning_effort=profile.reasoning_effort,
        resume_session_id=resume_session_id,
        max_turns=max_turns,
        allowed_tools=runtime.tool_rules(record.grants),
        base_url=runtime_config.base_url or "",
        api_key_file=runtime_config.api_key_file,
        home=home,
    )
    sandbox = sandboxing.plan(
        config,
        runtime=profile.runtime,
        cwd=cwd,
        writes=record.writes,
        network=profile.network,
        home=home,
        shown=shown,
    )
    limits = ProcessLimits(
        timeout=profile.timeout_s,
        idle_timeout=profile.idle_timeout_s,
        output_cap=config.bot.run_output_cap_mb * 1024 * 1024,
    )
    return Launch(
        profile, runtime, runtime_config, request, sandbox, _environment(runtime_config), limits
    )


def _environment(runtime_config: RuntimeSection) -> dict[str, str]:
    """The run's environment: the bot's base, the variables the runtime passes on from
    the bot's own, then the runtime's own settings."""
    base_env = default_base_env()
    for name in runtime_config.pass_env:
        if name in os.environ:
            base_env[name] = os.environ[name]
    base_env.update(runtime_config.env)
    return base_env
