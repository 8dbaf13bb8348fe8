"""Codex CLI: `codex ... exec --json`, prompt on stdin, JSONL events on stdout.

Command line (root options before `exec`, model options among them, as codex wants):

    codex --ask-for-approval never --sandbox read-only|workspace-write
          [-c model_provider=... (with base_url)]
          [--model M] [-c model_reasoning_effort="E"] -C <cwd>
          exec --ignore-user-config --skip-git-repo-check [--image P]...
          --json --color never [resume <id>] -

The prompt goes through stdin (`-`), not argv: a prompt can be larger than
ARG_MAX and would be visible to every user in `ps`. `--ignore-user-config`
keeps a stray `~/.codex/config.toml` from changing model, provider or sandbox
behind the configured profile's back. `--skip-git-repo-check`: codex refuses to
start outside a git repository it trusts ("Not inside a trusted directory"), a
guard for people starting it by hand; here the bot picks every working directory
itself (the repository, a card's worktree, the intake planner's empty folder) and
the sandbox is set explicitly, so the check would only break the planner's draft.

With a `base_url` the run goes to that OpenAI-compatible Responses endpoint as a
custom model provider defined entirely by `-c` overrides; its key, if any, is
read from `api_key_file` into `GATEWAY_API_KEY` of that one child.

The request's images go with the prompt as `--image` (codex reads each file and sends
it to the model as an `input_image` before the text; a resumed run's too).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from runners.runtimes import codex_limits, codex_talk, tool_config
from runners.runtimes.base import (
    Cli,
    Grant,
    Invocation,
    KeyFile,
    Mode,
    RunOutput,
    RunRequest,
    Runtime,
    Usage,
    as_int,
    as_str,
    clean_detail,
    validate_request,
)

NAME = "codex"
# The pin: scripts/test installs exactly this, `chatbot check` compares against it.
CLI = Cli("codex", "@openai/codex", "0.171.0")

GATEWAY_PROVIDER = "gateway"
GATEWAY_KEY_ENV = "GATEWAY_API_KEY"

SANDBOX = {Mode.READ_ONLY: "read-only", Mode.WORKSPACE_WRITE: "workspace-write"}
_ANSWER_ITEM_TYPES = frozenset({"agent_message", "assistant_message"})


def root_options(request: RunRequest) -> list[str]:
    """Options before `exec`; openrouter inserts its provider settings among these."""
    return [
        request.binary,
        "--ask-for-approval",
        "never",
        "--sandbox",
        SANDBOX[request.mode],
    ]


def provider_options(provider: str, name: str, base_url: str, env_key: str | None) -> list[str]:
    """A custom Responses-API model provider, defined with `-c` overrides only.

    Values are TOML strings made with json.dumps of already validated words and
    URLs. Without `env_key` codex sends no key (a gateway on a trusted network).
    """
    options = [
        "-c",
        f"model_provider={json.dumps(provider)}",
        "-c",
        f"model_providers.{provider}.name={json.dumps(name)}",
        "-c",
        f"model_providers.{provider}.base_url={json.dumps(base_url)}",
    ]
    if env_key:
        options += ["-c", f"model_providers.{provider}.env_key={json.dumps(env_key)}"]
    options += [
        "-c",
        f'model_providers.{provider}.wire_api="responses"',
        "-c",
        f"model_providers.{provider}.requires_openai_auth=false",
    ]
    return options


def model_options(request: RunRequest) -> list[str]:
    options: list[str] = []
    if request.model:
        options += ["--model", request.model]
    if request.reasoning_effort:
        # A TOML string value: json.dumps of an already validated [a-z]+ word.
        options += ["-c", f"model_reasoning_effort={json.dumps(request.reasoning_effort)}"]
    return options


def exec_options(request: RunRequest) -> list[str]:
    options = ["-C", str(request.cwd), "exec", "--ignore-user-config", "--skip-git-repo-check"]
    options += image_options(request)
    options += ["--json", "--color", "never"]
    if request.resume_session_id:
        options += ["resume", request.resume_session_id]
    options.append("-")
    return options


def image_options(request: RunRequest) -> list[str]:
    """`--image P` per picture, right after `exec`: the option takes every word up to the
    next option (measured: it would take the final `-` for an image) and splits a value
    at commas (`validate_request` refuses a path with one)."""
    return [word for image in request.images for word in ("--image", str(image))]


def build_argv(request: RunRequest) -> Invocation:
    # codex has no turn limit; `max_turns` is validated but the worker's resume
    # loop is what bounds a codex builder.
    validate_request(request)
    provider, secrets = _provider(request)
    argv = root_options(request) + provider + model_options(request)
    argv += tool_config.codex_options(request.tools) + exec_options(request)
    return Invocation(
        runtime=NAME,
        argv=tuple(argv),
        cwd=request.cwd,
        stdin=request.prompt,
        secret_env_files=MappingProxyType(secrets),
    )


def _provider(request: RunRequest) -> tuple[list[str], dict[str, Path]]:
    """The gateway's `-c` overrides and key file, when the request names a base_url."""
    if not request.base_url:
        return [], {}
    env_key = GATEWAY_KEY_ENV if request.api_key_file is not None else None
    options = provider_options(GATEWAY_PROVIDER, "Gateway", request.base_url, env_key)
    secrets = {GATEWAY_KEY_ENV: request.api_key_file} if request.api_key_file else {}
    return options, secrets


def build_talk_argv(request: RunRequest) -> Invocation:
    """`codex app-server` with the same provider, model and effort as `exec`."""
    return codex_talk.invocation(request, NAME, *_provider(request))


def hand_over(request: RunRequest, session_id: str) -> str:
    return codex_talk.hand_over_line(request, session_id, *_provider(request))


def step_of(event: dict[str, object]) -> str | None:
    """The step an `exec --json` event shows: a command started, files changed."""
    if event.get("type") not in ("item.started", "item.completed"):
        return None
    item = event.get("item")
    if not isinstance(item, dict):
        return None
    kind = item.get("type") or item.get("item_type")
    if kind == "command_execution" and event.get("type") == "item.started":
        command = as_str(item.get("command"))
        return f"ran: {command}" if command else None
    if kind == "file_change" and event.get("type") == "item.completed":
        changes = item.get("changes")
        paths = (
            [
                as_str(change.get("path"))
                for change in changes
                if isinstance(change, dict) and as_str(change.get("path"))
            ]
            if isinstance(changes, list)
            else []
        )
        return f"changed: {', '.join(p for p in paths if p)}" if paths else None
    return None


def _usage(value: object) -> Usage | None:
    if not isinstance(value, dict):
        return None
    counts = [
        as_int(value.get(key)) for key in ("input_tokens", "cached_input_tokens", "output_tokens")
    ]
    if all(count is None for count in counts):
        return None
    return Usage(*(count or 0 for count in counts))


def _error_message(event: dict[str, object]) -> str:
    error = event.get("error")
    if isinstance(error, dict):
        return as_str(error.get("message")) or json.dumps(error)[:200]
    return as_str(error) or as_str(event.get("message")) or "no message"


def parse_output(stdout: str, previous_usage: Usage | None = None) -> RunOutput:
    """Read `codex exec --json` output.

    The answer is the text of every completed agent message, in order. A damaged
    line is skipped when a valid message or the turn's completion follows it, or
    when the turn had completed before it: a stray non-JSON line must not lose a
    finished run, but damage where the run's end should be is a failure.
    `error` events (reconnect notices) are not fatal; `turn.failed` is, whatever
    the exit code. Usage in `turn.completed` is cumulative for the thread, so a
    resumed run's share is its reading less `previous_usage`.
    """
    events = _ExecEvents()
    for line in _lines(stdout):
        events.read_line(line)
    thread_usage = events.thread_usage
    usage = thread_usage
    if thread_usage is not None and previous_usage is not None:
        usage = thread_usage.minus(previous_usage)
    answer = "\n\n".join(events.parts).strip()
    failure = events.failure(answer)
    return RunOutput(
        answer=answer,
        session_id=events.session_id,
        usage=usage,
        thread_usage=thread_usage,
        turns=events.turns or None,
        model=events.model,
        failure=clean_detail(failure) if failure else None,
        limited=codex_limits.limited(events.turn_failed)
        if events.turn_failed is not None
        else None,
    )


@dataclass
class _ExecEvents:
    """What `codex exec --json` said so far, one line at a time (`parse_output`)."""

    parts: list[str] = field(default_factory=list)
    session_id: str | None = None
    model: str | None = None
    thread_usage: Usage | None = None
    turns: int = 0
    turn_failed: str | None = None
    error_events: list[str] = field(default_factory=list)
    damaged: int = 0
    #: Why the last damaged line was; None once a message or a turn's end follows it.
    pending_damage: str | None = None

    def read_line(self, line: str) -> None:
        try:
            event = json.loads(line)
        except ValueError as error:
            self._damage(str(error))
            return
        if not isinstance(event, dict):
            self._damage("a line that is not a JSON object")
            return
        self.model = as_str(event.get("model")) or self.model
        self._read(event.get("type"), event)

    def _damage(self, why: str) -> None:
        self.damaged += 1
        self.pending_damage = why

    def _read(self, kind: object, event: dict[str, Any]) -> None:
        if kind == "thread.started":
            self.session_id = as_str(event.get("thread_id")) or self.session_id
        elif kind == "session.created":
            # Name of the first event in codex versions before threads.
            self.session_id = as_str(event.get("session_id")) or self.session_id
        elif kind == "item.completed":
            item = event.get("item")
            if isinstance(item, dict):
                item_type = item.get("type") or item.get("item_type")
                text = as_str(item.get("text"))
                if item_type in _ANSWER_ITEM_TYPES and text and text.strip():
                    self.parts.append(text)
                    self.pending_damage = None
        elif kind == "turn.completed":
            self.turns += 1
            self.thread_usage = _usage(event.get("usage")) or self.thread_usage
            self.pending_damage = None
        elif kind == "turn.failed":
            self.turn_failed = _error_message(event)
        elif kind == "error":
            self.error_events.append(_error_message(event))

    def failure(self, answer: str) -> str | None:
        """Why the run failed (None: it did not), with the answer it gave."""
        if self.turn_failed is not None:
            return f"codex turn failed: {self.turn_failed}"
        if self.pending_damage is not None and not self.turns:
            return f"codex output ends in a damaged line: {self.pending_damage}"
        if answer:
            return None
        if self.error_events:
            return f"codex gave no answer; last error: {self.error_events[-1]}"
        if self.damaged:
            return "codex gave no answer; its output had only damaged lines"
        return "codex gave no answer"


def _lines(stdout: str) -> Iterable[str]:
    for line in stdout.splitlines():
        if line.strip():
            yield line


def state_paths(env: Mapping[str, str]) -> tuple[Path, ...]:
    """Its sessions (rollouts) and login: CODEX_HOME, else ~/.codex."""
    if env.get("CODEX_HOME"):
        return (Path(env["CODEX_HOME"]),)
    return (Path(env["HOME"]) / ".codex",) if env.get("HOME") else ()


RUNTIME = Runtime(
    name=NAME,
    cli=CLI,
    build_argv=build_argv,
    parse_output=parse_output,
    step_of=step_of,
    # Its read-only sandbox runs commands that only read: git's reads need no grant.
    grants={Grant.GIT_READS: ()},
    # `turn.completed` carries tokens, no cost.
    reports_cost=False,
    # No turn limit of its own: each run is one iteration, the worker resumes the thread.
    bounds_turns=False,
    resumes=True,
    key_file=KeyFile(
        needs_base_url=True,
        problem="codex uses its own login (CODEX_HOME); a key file needs base_url too",
    ),
    talking=codex_talk.talking(build_talk_argv),
    hand_over=hand_over,
    state_paths=state_paths,
    login_files=("auth.json",),
    hides_tmp=True,
    own_protection="its own sandbox (bubblewrap or Landlock) around every command it runs",
)
