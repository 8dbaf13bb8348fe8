"""OpenRouter: the codex CLI pointed at OpenRouter's Responses API as a model provider.

The provider is defined entirely with `-c` overrides, so nothing depends on a
config file on the host. Codex reads the API key from the variable named by
`env_key`; the key file's path travels in the invocation and the key itself is
read at spawn time into that one child's environment. It is never in argv
(visible in `ps`), never in this module's objects, never logged.

OpenRouter model ids are `vendor/model`, so a model is required here: the codex
default model name would not exist at OpenRouter. A `base_url` replaces OpenRouter's
own endpoint (a proxy in front of it, or any service speaking the same API).
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from runners.runtimes import codex, codex_talk, tool_config
from runners.runtimes.base import (
    InvalidRequest,
    Invocation,
    KeyFile,
    RunOutput,
    RunRequest,
    Runtime,
    Usage,
)

NAME = "openrouter"
BASE_URL = "https://openrouter.ai/api/v1"
API_KEY_ENV = "OPENROUTER_API_KEY"


def provider_options(base_url: str = BASE_URL) -> list[str]:
    return codex.provider_options("openrouter", "OpenRouter", base_url, API_KEY_ENV)


def build_argv(request: RunRequest) -> Invocation:
    if not request.model:
        raise InvalidRequest("openrouter needs an explicit model (vendor/model)")
    if request.api_key_file is None:
        raise InvalidRequest("openrouter needs api_key_file")
    plain = codex.build_argv(request)  # validates the request
    argv = (
        codex.root_options(request)
        + provider_options(request.base_url or BASE_URL)
        + codex.model_options(request)
        + tool_config.codex_options(request.tools)
        + codex.exec_options(request)
    )
    return Invocation(
        runtime=NAME,
        argv=tuple(argv),
        cwd=plain.cwd,
        stdin=plain.stdin,
        secret_env_files=MappingProxyType({API_KEY_ENV: request.api_key_file}),
    )


def _key(request: RunRequest) -> dict[str, Path]:
    if not request.model:
        raise InvalidRequest("openrouter needs an explicit model (vendor/model)")
    if request.api_key_file is None:
        raise InvalidRequest("openrouter needs api_key_file")
    return {API_KEY_ENV: request.api_key_file}


def build_talk_argv(request: RunRequest) -> Invocation:
    """`codex app-server` with OpenRouter as its provider, as `exec` gets it."""
    secrets = _key(request)
    provider = provider_options(request.base_url or BASE_URL)
    return codex_talk.invocation(request, NAME, provider, secrets)


def hand_over(request: RunRequest, session_id: str) -> str:
    secrets = _key(request)
    provider = provider_options(request.base_url or BASE_URL)
    return codex_talk.hand_over_line(request, session_id, provider, secrets)


def parse_output(stdout: str, previous_usage: Usage | None = None) -> RunOutput:
    return codex.parse_output(stdout, previous_usage)


def step_of(event: dict[str, object]) -> str | None:
    return codex.step_of(event)


# The codex program with another provider: codex's pin, grants and capabilities.
RUNTIME = Runtime(
    name=NAME,
    cli=codex.CLI,
    build_argv=build_argv,
    parse_output=parse_output,
    step_of=step_of,
    grants=codex.RUNTIME.grants,
    reports_cost=codex.RUNTIME.reports_cost,
    bounds_turns=codex.RUNTIME.bounds_turns,
    resumes=codex.RUNTIME.resumes,
    key_file=KeyFile(required=True, problem="required for the OpenRouter runtime"),
    talking=codex_talk.talking(build_talk_argv),
    hand_over=hand_over,
    vendor_url=BASE_URL,
    state_paths=codex.state_paths,
    login_files=("auth.json",),
    hides_tmp=True,
    own_protection="codex's own sandbox (bubblewrap or Landlock) around every command it runs",
)
