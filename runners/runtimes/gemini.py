"""Gemini CLI: `gemini -o stream-json --skip-trust`, prompt on stdin, one JSON event per line.

Command line:

    gemini -o stream-json --skip-trust [-m M]
           [--approval-mode yolo]                         (builder, fixer)
           [--policy <home>/policies/grants-<digest>.toml]  (a read-only role's grants)
           [--resume <id>] [--include-directories <a picture's folder>]...

Environment: `GEMINI_CLI_HOME=<home>` (`RunRequest.home`, the bot's folder for this
runtime on this host), `GEMINI_CLI_NO_RELAUNCH=true`, `GOOGLE_GEMINI_BASE_URL` (with a
`base_url`), `GEMINI_MAX_TURNS` (with `max_turns`) and `GEMINI_API_KEY`, read from
`api_key_file` at spawn time into that one child.

The home replaces the user's `~/.gemini`: its settings, memory, policies, extensions and
sessions can neither widen nor break a run, and resume finds its sessions there (per
working directory). The settings file below is written into it before every run: it
selects API-key auth (0.61.0 otherwise takes `GOOGLE_GEMINI_BASE_URL` for an auth it
refuses), keeps the key out of the shell's environment, turns usage statistics (its
only outside call) and update checks off, and reads the turn bound from the
environment. So a key file is required; the user's own Google login is never used.

`--skip-trust` trusts the working folder only after settings are loaded: a repository's
own `.gemini/settings.json` and its hooks stay ignored (GEMINI_CLI_TRUST_WORKSPACE would
apply them). A read-only role runs in the default approval mode, where a headless run
is not even offered a tool that writes or runs a command; its grants (a reviewer's git
reads) are allowed by a policy file as command prefixes, word-bounded, each part of a
chain or substitution checked, redirections refused; the policy denies the options that
make those commands write or start a program. Builders and fixers run in `yolo` mode in
their worktree (as with Claude Code, the shell is not sandboxed).

The request's images go in as `@<path>` references at the end of the prompt: the CLI
reads each file and sends it as inline data (`inlineData`, the type from the file) with
the prompt. It reads only its workspace (the working folder, and the folder of a picture
outside it, added with `--include-directories`), and it skips a file git ignores by the
working folder's `.gitignore` files or its own `.git/info/exclude` (a card's worktree has
none: its `.git` is a file, so `runners.run_files.FOLDER` there goes in; in a main
checkout that excludes the folder, a picture must be put outside it).

Without the relaunch switch the CLI runs as a launcher that ignores SIGTERM and a child:
one process is half a second faster to start, and the group kill ends either way.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from types import MappingProxyType

from runners.runtimes import tool_config
from runners.runtimes.base import (
    Cli,
    Grant,
    InvalidRequest,
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
    last_line,
    validate_request,
)

NAME = "gemini"
# The pin: scripts/test installs exactly this, `chatbot check` compares against it.
CLI = Cli("gemini", "@google/gemini-cli", "0.61.0")

HOME_ENV = "GEMINI_CLI_HOME"
BASE_URL_ENV = "GOOGLE_GEMINI_BASE_URL"
API_KEY_ENV = "GEMINI_API_KEY"
MAX_TURNS_ENV = "GEMINI_MAX_TURNS"
TURN_LIMIT_ERROR = "FatalTurnLimitedError"

# A grant is a command prefix ("git show"): words, nothing a shell, TOML or the policy's
# own matching could read as more.
RULE_RE = re.compile(r"^[a-z][a-z0-9-]*( [a-z0-9][a-z0-9-]*)*$")
REVIEW_GIT_COMMANDS = ("git show", "git diff", "git log", "git grep")

SETTINGS = (
    json.dumps(
        {
            "security": {
                "auth": {"selectedType": "gemini-api-key"},
                # A command the agent runs otherwise sees GEMINI_API_KEY (measured: `env`).
                "environmentVariableRedaction": {"enabled": True},
            },
            "privacy": {"usageStatisticsEnabled": False},
            "general": {
                "enableAutoUpdate": False,
                "enableAutoUpdateNotification": False,
                # Gemini CLI prunes its kept sessions at every start, unawaited, beside
                # the run: it deletes a chat file it cannot read at that moment, such as
                # the one a resumed run is writing (a builder's continued session lost
                # once under load). The bot resumes sessions; it keeps them itself.
                "sessionRetention": {"enabled": False},
            },
            # Settings strings expand ${VAR:-default}; -1 is no bound.
            "model": {"maxSessionTurns": f"${{{MAX_TURNS_ENV}:--1}}"},
            # The bot's tools for the run whose environment names its socket.
            "mcpServers": tool_config.gemini_servers(),
        },
        indent=2,
    )
    + "\n"
)

# Allowed: the granted prefixes. Denied above them: `--output` (git diff, show and log
# write a file with it; git refuses an abbreviation of it) and git grep's -O/--open-files-
# in-pager (it starts a program). Anything else falls to the headless default: refused.
POLICY = """# Written by the intent board: what a read-only run may run besides reading files.
[[rule]]
toolName = "run_shell_command"
commandPrefix = {prefixes}
decision = "allow"
priority = 100

[[rule]]
toolName = "run_shell_command"
commandRegex = ".*--output"
decision = "deny"
priority = 200
denyMessage = "A granted command may not write a file."

[[rule]]
toolName = "run_shell_command"
commandRegex = 'git grep.*\\s(-[A-Za-z]*O|--o)'
decision = "deny"
priority = 200
denyMessage = "git grep may not start a program."
"""


def settings_path(home: Path) -> Path:
    return home / ".gemini" / "settings.json"


def policy_for(home: Path, rules: tuple[str, ...]) -> tuple[Path, str]:
    """The policy file granting `rules`, named by its text: runs with the same grants
    share one file, and one with other grants never overwrites it. Outside
    `.gemini/policies`, which the CLI would load for every run."""
    text = POLICY.format(prefixes=json.dumps(list(rules)))
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return home / "policies" / f"grants-{digest}.toml", text


def build_argv(request: RunRequest) -> Invocation:
    validate_request(request, RULE_RE)
    if request.home is None:
        raise InvalidRequest("gemini needs a home folder of its own (RunRequest.home)")
    argv = [request.binary, "-o", "stream-json", "--skip-trust"]
    if request.model:
        argv += ["-m", request.model]
    files = {settings_path(request.home): SETTINGS}
    if request.mode is Mode.WORKSPACE_WRITE:
        argv += ["--approval-mode", "yolo"]
    elif request.allowed_tools:
        path, text = policy_for(request.home, request.allowed_tools)
        files[path] = text
        argv += ["--policy", str(path)]
    if request.resume_session_id:
        argv += ["--resume", request.resume_session_id]
    for folder in _outside(request):
        argv += ["--include-directories", str(folder)]
    env = {HOME_ENV: str(request.home), "GEMINI_CLI_NO_RELAUNCH": "true"}
    if request.base_url:
        env[BASE_URL_ENV] = request.base_url
    if request.max_turns is not None:
        env[MAX_TURNS_ENV] = str(request.max_turns)
    env.update(tool_config.gemini_env(request.tools))
    secrets = {API_KEY_ENV: request.api_key_file} if request.api_key_file is not None else {}
    return Invocation(
        runtime=NAME,
        argv=tuple(argv),
        cwd=request.cwd,
        stdin=with_pictures(request.prompt, request.images),
        env_extras=MappingProxyType(env),
        secret_env_files=MappingProxyType(secrets),
        files=MappingProxyType(files),
    )


# What ends an `@path` in the CLI's prompt parser (0.61.0, atCommandProcessor): written
# with a backslash before it, which the parser takes away again.
_AT_PATH_STOPS = frozenset(' \t\n\r,;!?()[]{}\\"')


def at_reference(path: Path) -> str:
    """`@<path>` as the CLI's prompt parser reads it back whole."""
    text = "".join(f"\\{ch}" if ch in _AT_PATH_STOPS else ch for ch in str(path))
    # A dot ends the reference only where whitespace or the end follows it.
    return "@" + (text[:-1] + "\\." if text.endswith(".") else text)


def with_pictures(prompt: str, images: tuple[Path, ...]) -> str:
    """The prompt with a reference to each picture: the CLI reads the file and sends it
    to the model as inline data after the prompt."""
    if not images:
        return prompt
    return f"{prompt}\n\nAttached pictures: {' '.join(at_reference(path) for path in images)}\n"


def _outside(request: RunRequest) -> list[Path]:
    """The folders of pictures outside the working folder: the CLI reads a file only in
    its workspace, which these extend."""
    folders: list[Path] = []
    for image in request.images:
        if not image.is_relative_to(request.cwd) and image.parent not in folders:
            folders.append(image.parent)
    return folders


def step_of(event: dict[str, object]) -> str | None:
    """The step a stream-json event shows: the tool the agent calls, with its target."""
    if event.get("type") != "tool_use":
        return None
    name = as_str(event.get("tool_name")) or "a tool"
    given = raw if isinstance(raw := event.get("parameters"), dict) else {}
    detail = next(
        (
            as_str(given.get(key))
            for key in ("command", "file_path", "dir_path", "path", "pattern", "query", "url")
            if as_str(given.get(key))
        ),
        None,
    )
    return f"{name}: {detail}" if detail else name


def stderr_reason(stderr: str) -> str:
    """Why a run that printed no events stopped: the last line of stderr not indented.
    Its start-up errors go on in indented lines ("Error resuming session: ...", then
    where it searched and what to try), and stack traces are indented frames."""
    lines = [line for line in stderr.splitlines() if line.strip() and not line[0].isspace()]
    return lines[-1] if lines else last_line(stderr)


def _usage(stats: object) -> Usage | None:
    if not isinstance(stats, dict):
        return None
    counts = [as_int(stats.get(key)) for key in ("input_tokens", "cached", "output_tokens")]
    if all(count is None for count in counts):
        return None
    return Usage(*(count or 0 for count in counts))


def _model(stats: object) -> str | None:
    """The model that did most of the work: the stats name each by the model version the
    API answered with, not by the name asked for."""
    models = stats.get("models") if isinstance(stats, dict) else None
    if not isinstance(models, dict):
        return None
    ranked = sorted(
        (
            (as_int(entry.get("output_tokens")) or 0, name)
            for name, entry in models.items()
            if isinstance(name, str) and name and isinstance(entry, dict)
        ),
        reverse=True,
    )
    return ranked[0][1] if ranked else None


def parse_output(stdout: str, previous_usage: Usage | None = None) -> RunOutput:
    """Read `gemini -o stream-json` output.

    The last line of a run that got past start-up is `result`: `success`, or `error`
    with its type and message (`FatalTurnLimitedError`: the turn bound stopped it).
    Without one the run failed (the caller adds the stderr's last line). The answer is
    the assistant's text after the last tool result: text before a tool call is the
    agent talking to itself. `error` events are notices, not failures. Usage is this
    invocation's (resumed or not), so `previous_usage` is not needed. The turns are
    the model requests: one per batch of tool calls, and the one that answered.
    """
    del previous_usage
    session_id: str | None = None
    asked_model: str | None = None
    parts: list[str] = []
    batches, in_batch = 0, False
    notices: list[str] = []
    result: dict[str, object] | None = None
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a stray line; the result line must be there, whole
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "init":
            session_id = as_str(event.get("session_id")) or session_id
            asked_model = as_str(event.get("model")) or asked_model
        elif kind == "message" and event.get("role") == "assistant":
            text = event.get("content")
            parts.append(text if isinstance(text, str) else "")
        elif kind == "tool_use":
            batches += 0 if in_batch else 1
            in_batch = True
        elif kind == "tool_result":
            in_batch = False
            parts.clear()
        elif kind == "error":
            notices.append(as_str(event.get("message")) or "no message")
        elif kind == "result":
            result = event
    answer = "".join(parts).strip()

    failure: str | None = None
    limited = False
    stats: object = None
    if result is None:
        last = f"; last notice: {notices[-1]}" if notices else ""
        failure = f"gemini output has no result{last}" if stdout.strip() else "gemini said nothing"
    else:
        stats = result.get("stats")
        error = result.get("error")
        error = error if isinstance(error, dict) else {}
        kind = as_str(error.get("type")) or "no type"
        message = as_str(error.get("message")) or "no message"
        if result.get("status") == "success":
            failure = None if answer else "gemini gave no answer"
        elif kind == TURN_LIMIT_ERROR:
            limited = True
            failure = f"gemini stopped at its turn limit: {message}"
        else:
            failure = f"gemini reported an error ({kind}): {message}"

    return RunOutput(
        answer=answer,
        session_id=session_id,
        usage=_usage(stats),
        turns=(batches if limited else batches + 1) if result is not None else None,
        model=_model(stats) or asked_model,
        duration_ms=as_int(stats.get("duration_ms")) if isinstance(stats, dict) else None,
        failure=clean_detail(failure) if failure else None,
        turn_limit_reached=limited,
    )


RUNTIME = Runtime(
    name=NAME,
    cli=CLI,
    build_argv=build_argv,
    parse_output=parse_output,
    step_of=step_of,
    # Its headless default mode refuses every command: the reviewer's reads are granted.
    grants={Grant.GIT_READS: REVIEW_GIT_COMMANDS},
    rule_re=RULE_RE,
    stderr_reason=stderr_reason,
    # `result.stats` has tokens, no cost: runs are priced by the configuration.
    reports_cost=False,
    # GEMINI_MAX_TURNS through its settings, and FatalTurnLimitedError when it stopped there.
    bounds_turns=True,
    resumes=True,
    # No flag or setting takes an effort for every model: none is passed.
    takes_effort=False,
    key_file=KeyFile(
        required=True,
        problem=(
            "required for gemini: it runs with an API key (GEMINI_API_KEY) in a home "
            "of the bot's own, never with your Google login"
        ),
    ),
    vendor_url="https://generativelanguage.googleapis.com",
)
