"""Claude Code: `claude -p --output-format stream-json`, prompt on stdin, a result last.

Command line:

    claude -p --output-format json --permission-mode dontAsk|acceptEdits
           [--settings F] --setting-sources "" [--allowedTools "T1 T2"]
           [--disallowedTools Edit,Write,NotebookEdit] [--add-dir D]...
           [--model M] [--effort E] [--max-turns N] [--resume <id>]

Read-only roles run in `dontAsk` mode with the write tools disallowed: the
disallow list is a hard block that no settings file or permission rule can
reopen, and `dontAsk` refuses every tool not pre-granted by `--allowedTools`
instead of waiting for a prompt nobody will answer. Writing roles run with
`acceptEdits`. `--setting-sources ""` keeps user and project settings from
widening either.

The disallow list names the write tools of the tested Claude Code version exactly
(`CLI` below): a name it does not know, like the `MultiEdit` of older
versions, is logged as "Permission deny rule matches no known tool" on every run.

With a `base_url` the run talks to that Anthropic-compatible API
(`ANTHROPIC_BASE_URL`); `api_key_file` is read at spawn time into
`ANTHROPIC_API_KEY` of that one child, which otherwise uses its own login.

A run the bot talks to (steers, approvals, interrupts) goes through the same command
line in its interactive form (`claude_talk`), and so does a one-shot run with
`RunRequest.images`: its pictures go as image blocks of the first user message, which
only `--input-format stream-json` takes (nobody steers it; what it would ask is denied).

Claude Code keeps its sessions under the HOME it runs with (`~/.claude/projects/<cwd>/`),
not in `RunRequest.home`: moving it there would also hide the user's own login. So a
session is continued in a terminal as the same user, in the same working directory
(`hand_over`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

from runners.runtimes import claude_talk, tool_config
from runners.runtimes.base import (
    SESSION_ID_RE,
    Cli,
    Grant,
    InvalidRequest,
    Invocation,
    Limited,
    Mode,
    RunOutput,
    RunRequest,
    Runtime,
    Usage,
    as_float,
    as_int,
    as_str,
    clean_detail,
    validate_request,
)
from runners.runtimes.talk import Talking

NAME = "claude"
# The pin: scripts/test installs exactly this, `chatbot check` compares against it.
CLI = Cli("claude", "@anthropic-ai/claude-code", "2.1.332")

WRITE_TOOLS = ("Edit", "Write", "NotebookEdit")
# What a reviewer (or the synthesis) needs of git, granted so that `dontAsk` never
# refuses them: the commit, its diff, its history. `git grep` is left to Claude Code's
# own read-only check, which refuses `-O` (it runs a program): no grant pattern can
# (`git grep *` also matches `-iOcmd`, measured on the tested version).
REVIEW_GIT_TOOLS = ("Bash(git show *)", "Bash(git diff *)", "Bash(git log *)")
# A grant matches any arguments, and `--output=FILE` makes these commands write a file
# (measured: `git diff --output=...` ran under the grant), so that option is denied.
GRANTED_GIT_WRITES = ("Bash(git * --output*)",)
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
API_KEY_ENV = "ANTHROPIC_API_KEY"
PERMISSION_MODE = {Mode.READ_ONLY: "dontAsk", Mode.WORKSPACE_WRITE: "acceptEdits"}


def build_argv(request: RunRequest) -> Invocation:
    validate_request(request)
    argv = [
        request.binary,
        "-p",
        # One JSON event per line while it works (the run's progress), the result last;
        # stream-json in print mode wants --verbose.
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        PERMISSION_MODE[request.mode],
    ]
    argv += ["--setting-sources", ""]
    allowed = [*request.allowed_tools, *tool_config.claude_rules(request.tools)]
    if allowed:
        argv += ["--allowedTools", " ".join(allowed)]
    if request.mode is Mode.READ_ONLY:
        denied: tuple[str, ...] = WRITE_TOOLS
        if any(rule.startswith("Bash(git ") for rule in request.allowed_tools):
            denied += GRANTED_GIT_WRITES
        argv += ["--disallowedTools", ",".join(denied)]
    if request.model:
        argv += ["--model", request.model]
    if request.reasoning_effort:
        argv += ["--effort", request.reasoning_effort]
    if request.max_turns is not None:
        argv += ["--max-turns", str(request.max_turns)]
    if request.resume_session_id:
        argv += ["--resume", request.resume_session_id]
    argv += tool_config.claude_options(request.tools)
    env = {BASE_URL_ENV: request.base_url} if request.base_url else {}
    env.update(tool_config.claude_env(request.tools))
    secrets: dict[str, Path] = {}
    if request.api_key_file is not None:
        secrets[API_KEY_ENV] = request.api_key_file
    return Invocation(
        runtime=NAME,
        argv=tuple(argv),
        cwd=request.cwd,
        stdin=request.prompt,
        env_extras=MappingProxyType(env),
        secret_env_files=MappingProxyType(secrets),
    )


def _find_result(stdout: str) -> tuple[dict[str, object] | None, str | None, str | None]:
    """(result object, model named by an init message, why nothing was found).

    `stream-json` is one event per line with the result last; `json` one object (the
    list of messages with `--verbose`). Lines that are not JSON (a warning some
    versions print) are skipped; the result must be there, whole.
    """
    text = stdout.strip()
    if not text:
        return None, None, "claude produced no output"
    try:
        data = json.loads(text)
    except ValueError as error:
        data = []
        for line in text.splitlines():
            try:
                data.append(json.loads(line))
            except ValueError:
                continue
        if not data:
            return None, None, f"claude output is not JSON: {error}"
    if isinstance(data, dict):
        return data, None, None
    if isinstance(data, list):
        # `--verbose` turns the output into the whole message list; the last result counts.
        init_model = None
        result = None
        for element in data:
            if not isinstance(element, dict):
                continue
            if element.get("type") == "system" and element.get("subtype") == "init":
                init_model = as_str(element.get("model")) or init_model
            elif element.get("type") == "result":
                result = element
        if result is None:
            return None, init_model, "claude output has no result message"
        return result, init_model, None
    return None, None, "claude output is neither a JSON object nor a list"


def _usage(value: object) -> Usage | None:
    if not isinstance(value, dict):
        return None
    fresh = as_int(value.get("input_tokens"))
    created = as_int(value.get("cache_creation_input_tokens"))
    read = as_int(value.get("cache_read_input_tokens"))
    output = as_int(value.get("output_tokens"))
    if fresh is None and created is None and read is None and output is None:
        return None
    return Usage(
        input_tokens=(fresh or 0) + (created or 0) + (read or 0),
        cached_input_tokens=read or 0,
        output_tokens=output or 0,
    )


def _model_from_usage(value: object) -> str | None:
    """The model that did most of the work, from the per-model usage table."""
    if not isinstance(value, dict) or not value:
        return None
    ranked = sorted(
        (
            (as_int(entry.get("outputTokens")) or 0, name)
            for name, entry in value.items()
            if isinstance(name, str) and isinstance(entry, dict)
        ),
        reverse=True,
    )
    return ranked[0][1] if ranked else None


def _errors_text(value: object) -> str:
    if not isinstance(value, list):
        return ""
    texts = []
    for entry in value:
        if isinstance(entry, str):
            texts.append(entry)
        elif isinstance(entry, dict):
            texts.append(as_str(entry.get("message")) or json.dumps(entry)[:120])
    return "; ".join(text for text in texts if text)


def step_of(event: dict[str, object]) -> str | None:
    """The step a stream-json event shows: the tool an assistant message uses."""
    if event.get("type") != "assistant":
        return None
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return None
    for block in reversed(content):
        if isinstance(block, dict) and block.get("type") == "tool_use":
            name = as_str(block.get("name")) or "a tool"
            given = raw if isinstance(raw := block.get("input"), dict) else {}
            detail = next(
                (
                    as_str(given.get(key))
                    for key in ("command", "file_path", "path", "pattern", "url", "query")
                    if as_str(given.get(key))
                ),
                None,
            )
            return f"{name}: {detail}" if detail else name
    return None


def parse_output(stdout: str, previous_usage: Usage | None = None) -> RunOutput:
    """Read `claude -p --output-format stream-json` (or `json`) output.

    `is_error: true` is a failure even when the subtype says `success` (an API
    error is reported that way); any subtype other than `success` is a failure
    whose detail comes from `errors[]`. Claude reports usage per invocation, so
    `previous_usage` is not needed and ignored.
    """
    del previous_usage
    result, init_model, problem = _find_result(stdout)
    if result is None:
        return RunOutput(model=init_model, failure=clean_detail(problem))

    subtype = as_str(result.get("subtype")) or ""
    answer = result.get("result")
    answer = answer.strip() if isinstance(answer, str) else ""
    errors = _errors_text(result.get("errors"))
    cost = as_float(result.get("total_cost_usd"))
    if cost is None:
        cost = as_float(result.get("cost_usd"))  # older name of the same field

    failure: str | None = None
    if result.get("is_error") is True:
        failure = f"claude reported an error ({subtype or 'no subtype'}): {errors or answer}"
    elif subtype and subtype != "success":
        failure = f"claude ended with {subtype}: {errors or 'no detail'}"
    elif not answer:
        failure = "claude gave no answer"

    return RunOutput(
        answer=answer,
        limited=_limited(stdout, result) if failure else None,
        session_id=as_str(result.get("session_id")),
        usage=_usage(result.get("usage")),
        cost_usd=cost,
        turns=as_int(result.get("num_turns")),
        model=(
            as_str(result.get("model")) or init_model or _model_from_usage(result.get("modelUsage"))
        ),
        duration_ms=as_int(result.get("duration_ms")),
        failure=clean_detail(failure) if failure else None,
        turn_limit_reached=subtype == "error_max_turns",
    )


# Claude Code's own words on a subscription's limit: "Claude AI usage limit reached|<epoch>"
# (older versions), "You've hit your session limit · resets 3pm" (newer ones).
_USAGE_LIMIT = re.compile(
    r"usage limit reached(?:\|(\d{9,11}))?|hit your (?:session |weekly |fast )?limit", re.I
)


def _limited(stdout: str, result: dict[str, object]) -> Limited | None:
    """The provider's quota or rate limit ended the run, with its reset time if given.

    Measured (tests/runners/data/quota/claude_rate_limit.json): on a 429 the result has
    `is_error: true`, `api_error_status: 429`, `api_error_type: "rate_limit_error"` and
    the text "API Error: Request rejected (429) · <the API's message>"; a subscription's
    limit adds a `rate_limit_event` whose `rate_limit_info.status` is "rejected" with
    `resetsAt` (epoch seconds).
    """
    text = as_str(result.get("result")) or _errors_text(result.get("errors"))
    reset_at = None
    rejected = False
    for line in stdout.splitlines():
        if '"rate_limit_event"' not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        info = event.get("rate_limit_info") if isinstance(event, dict) else None
        if isinstance(info, dict) and info.get("status") == "rejected":
            rejected = True
            reset_at = as_float(info.get("resetsAt")) or reset_at
    found = _USAGE_LIMIT.search(text)
    if found and found[1]:
        reset_at = reset_at or float(found[1])
    status = as_int(result.get("api_error_status"))
    if rejected or found or status == 429 or result.get("api_error_type") == "rate_limit_error":
        return Limited(clean_detail(text or "claude: rate limited"), reset_at)
    return None


def talk_argv(request: RunRequest) -> Invocation:
    return claude_talk.interactive(build_argv(request), request.mode)


def parse_talk(stdout: str, previous_usage: Usage | None = None) -> RunOutput:
    """Read an interactive run's output: the last turn's result as strictly as
    `parse_output`, over every turn the run had.

    A steer can start a turn of its own, each ending in a result: their usage, turns
    and durations add up (each result counts only its turn); the cost is the last
    result's (it counts the whole process). A last turn the bot interrupted is no
    failure: `interrupted`, no answer, the session id to resume.
    """
    output = parse_output(stdout, previous_usage)
    found = claude_talk.events(stdout)
    results = [event for event in found if event.get("type") == "result"]
    if not results:
        return output
    usages = [usage for usage in (_usage(result.get("usage")) for result in results) if usage]
    total = (
        Usage(
            sum(usage.input_tokens for usage in usages),
            sum(usage.cached_input_tokens for usage in usages),
            sum(usage.output_tokens for usage in usages),
        )
        if usages
        else None
    )
    turns = [turn for turn in (as_int(result.get("num_turns")) for result in results) if turn]
    durations = [ms for ms in (as_int(result.get("duration_ms")) for result in results) if ms]
    output = replace(
        output,
        usage=total,
        turns=sum(turns) if turns else output.turns,
        duration_ms=sum(durations) if durations else output.duration_ms,
    )
    if claude_talk.interrupted(found):
        return replace(output, answer="", failure=None, turn_limit_reached=False, interrupted=True)
    return output


def hand_over(request: RunRequest, session_id: str) -> str:
    """The shell line that continues `session_id` in a terminal, as the bot's user: in the
    run's working directory (Claude Code files sessions by it), against the same API."""
    if not SESSION_ID_RE.fullmatch(session_id):
        raise InvalidRequest("invalid session id to hand over")
    words = []
    if request.base_url:
        words.append(f"{BASE_URL_ENV}={shlex.quote(request.base_url)}")
    if request.api_key_file is not None:
        words.append(f'{API_KEY_ENV}="$(cat {shlex.quote(str(request.api_key_file))})"')
    words.append(shlex.quote(request.binary))
    if request.model:
        words += ["--model", shlex.quote(request.model)]
    words += ["--resume", shlex.quote(session_id)]
    return f"cd {shlex.quote(str(request.cwd))} && {' '.join(words)}"


def _state_paths(env: Mapping[str, str]) -> tuple[Path, ...]:
    """Its sessions and login under the HOME it runs with (see hand_over)."""
    home = env.get("HOME")
    return (Path(home) / ".claude",) if home else ()


RUNTIME = Runtime(
    name=NAME,
    cli=CLI,
    build_argv=build_argv,
    parse_output=parse_output,
    step_of=step_of,
    grants={Grant.GIT_READS: REVIEW_GIT_TOOLS},
    # `total_cost_usd` in its result.
    reports_cost=True,
    # `--max-turns`, and `error_max_turns` when it stopped there.
    bounds_turns=True,
    resumes=True,
    # A key file works without base_url too: ANTHROPIC_API_KEY instead of its login.
    talking=Talking(
        build_argv=talk_argv,
        converse=claude_talk.converse,
        parse_output=parse_talk,
        step_of=step_of,
        # `-p` takes text on stdin; image blocks need `--input-format stream-json`.
        for_images=True,
    ),
    hand_over=hand_over,
    vendor_url="https://api.anthropic.com",
    state_paths=_state_paths,
    login_files=(".credentials.json",),
    own_protection="asks before a command or a write outside its worktree",
)
