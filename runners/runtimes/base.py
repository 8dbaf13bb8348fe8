"""Types every runtime shares: the request, the built invocation, the parsed output, and
the `Runtime` record each agent CLI's module exports.

A runtime's heart is two pure functions: `build_argv(request) -> Invocation` and
`parse_output(stdout, previous_usage) -> RunOutput`. Neither touches a process,
a file or the environment, so both are tested without a subprocess; running
them is `runners.runtimes.run.run_model`. A CLI that needs files on disk before it
starts (a settings file, a permission policy) names them in `Invocation.files`, and
`run_model` writes them: the builder stays pure. Everything else a caller needs to know
about a CLI (its pin, its grant syntax, what it can do, what its configuration
must hold) is data on its record, so callers ask the record, never the name.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from runners import profiles
from runners.runtimes.progress import StepOf
from runners.tool_server import ToolServer, ToolServerError

MAX_FAILURE_DETAIL = 240
#: Pictures one prompt or steer may carry (`RunRequest.images`, `Steer.images`).
MAX_IMAGES = 8

# Session ids come back from a CLI's own output (UUIDs, `th_...`); anything that
# could be read as an option or a path is refused before it reaches argv.
SESSION_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")

# An endpoint the CLI talks to instead of its vendor's: it reaches an argv (codex `-c`)
# or a child's environment (claude), so only URL characters, nothing a TOML string,
# a shell or an option parser could take for anything else.
BASE_URL_PATTERN = r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%/+-]*)?$"
BASE_URL_RE = re.compile(BASE_URL_PATTERN)

# A claude tool rule: `Read`, `mcp__server__tool`, `Bash(git diff *)`. Nothing that an
# option parser could take for an option, nothing that spans lines.
TOOL_RULE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\([^()\x00-\x1f]*\))?$")

_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_SPACE_RE = re.compile(r"\s+")


class RunnerError(Exception):
    """Base of the errors this package raises for its callers."""


class InvalidRequest(RunnerError, ValueError):
    """A request that must not reach a command line (bad model name, bad session id...)."""


class Mode(enum.StrEnum):
    """What a role may do to files. Builder and fixer write; every other role only reads."""

    READ_ONLY = "read_only"
    WORKSPACE_WRITE = "workspace_write"


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One model run, independent of the runtime that will execute it.

    `model` and `reasoning_effort` are "" for "the CLI's default". `max_turns`
    bounds a builder's agent turns where the CLI has such a limit (claude);
    codex has none, there the worker iterates with `resume_session_id`.
    `api_key_file` is only a path: the key is read at spawn time and goes only
    into that child's environment. `base_url` points the CLI at another model
    provider: an OpenAI-compatible Responses endpoint (codex, openrouter) or an
    Anthropic-compatible API (claude); "" means the CLI's own.

    `home` is a folder the bot owns for this runtime on this host
    (`runners.workspace.agent_home`: `<workspaces>/.agent-homes/<runtime>`), the same
    for every run, so a session begun in one run is found by the next. A CLI that keeps
    its settings and sessions in a home of its own is pointed there instead of the
    user's, so nothing of the user's configuration widens or breaks a run; a CLI that
    needs none ignores it.

    `tools` is the bot's MCP server for this run (`runners.tool_server`): each CLI is
    configured to start it and to call its tools without asking; None: no tools.

    `images` are pictures for the model, by absolute path (`runners.run_files.place`
    puts them in the run's folder, where the CLI, in its sandbox, can read them); each
    CLI sends them its own way with the prompt: codex as local images (`--image`, or
    `localImage` input over app-server), Claude Code as image blocks of the first user
    message (a one-shot run goes through its stream-json protocol for it), Gemini CLI
    as `@<path>` references in the prompt. At most `MAX_IMAGES`.
    """

    binary: str
    cwd: Path
    prompt: str = field(repr=False)
    mode: Mode = Mode.READ_ONLY
    model: str = ""
    reasoning_effort: str = ""
    resume_session_id: str = ""
    max_turns: int | None = None
    # Tools granted without asking (a reviewer's read-only git commands), in the CLI's own
    # syntax: what `Runtime.tool_rules` made of the role's grants.
    allowed_tools: tuple[str, ...] = ()
    # the model provider: where the CLI sends its requests, and the key it sends
    base_url: str = ""
    api_key_file: Path | None = None
    home: Path | None = None
    images: tuple[Path, ...] = ()
    tools: ToolServer | None = None

    def __post_init__(self) -> None:
        if isinstance(self.images, list):
            object.__setattr__(self, "images", tuple(self.images))
        # Accept the plain strings a configuration file holds ("read_only").
        if not isinstance(self.mode, Mode):
            try:
                object.__setattr__(self, "mode", Mode(self.mode))
            except ValueError:
                raise InvalidRequest(f"unknown mode: {self.mode!r}") from None


@dataclass(frozen=True, slots=True)
class Invocation:
    """Exactly what will be run: argv, cwd, stdin, and which env to add.

    `env_extras` holds only non-secret values. `secret_env_files` names, per
    variable, the file its value is read from at spawn time; the value itself is
    never part of this object. `files` are what the CLI reads from disk (its settings,
    a permission policy), by absolute path, written before it starts wherever their
    text differs; never a secret.
    """

    runtime: str
    argv: tuple[str, ...]
    cwd: Path
    stdin: str = field(repr=False, default="")
    env_extras: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    secret_env_files: Mapping[str, Path] = field(default_factory=lambda: MappingProxyType({}))
    files: Mapping[Path, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts in one convention for every runtime.

    `input_tokens` counts every prompt token including those served from a
    cache; `cached_input_tokens` is the cached part of it (codex reports it this
    way; claude's separate counters are summed into it).
    """

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0

    def minus(self, earlier: Usage) -> Usage:
        """This cumulative usage less an earlier cumulative reading of the same thread.

        A reading that went backwards (a new thread, a CLI that reports per turn)
        is not cumulative relative to `earlier`, so it is returned unchanged.
        """
        if (
            self.input_tokens < earlier.input_tokens
            or self.cached_input_tokens < earlier.cached_input_tokens
            or self.output_tokens < earlier.output_tokens
        ):
            return self
        return Usage(
            self.input_tokens - earlier.input_tokens,
            self.cached_input_tokens - earlier.cached_input_tokens,
            self.output_tokens - earlier.output_tokens,
        )


@dataclass(frozen=True, slots=True)
class Limited:
    """The provider's quota or rate limit stopped the run: nothing is wrong with the work.

    `reset_at` is the epoch time the CLI said the limit resets, when it said one.
    """

    reason: str
    reset_at: float | None = None


@dataclass(frozen=True, slots=True)
class RunOutput:
    """What a run produced, normalised over runtimes; `failure` is None on success.

    `usage` is this run's share; `thread_usage` is the CLI's cumulative reading
    for the session (codex), to be passed back as `previous_usage` when the
    session is resumed. `turn_limit_reached` tells the builder pipeline to
    escalate rather than fail.
    """

    answer: str = field(repr=False, default="")
    session_id: str | None = None
    usage: Usage | None = None
    thread_usage: Usage | None = None
    cost_usd: float | None = None
    turns: int | None = None
    model: str | None = None
    duration_ms: int | None = None
    failure: str | None = None
    turn_limit_reached: bool = False
    #: The owner interrupted the turn (`Conversation.interrupt`); the session can resume.
    interrupted: bool = False
    #: The failure is the provider's quota or rate limit (read by the runtime's parser).
    limited: Limited | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


def clean_detail(text: object, limit: int = MAX_FAILURE_DETAIL) -> str:
    """A failure reason fit for a chat line and a database column."""
    detail = _CONTROL_RE.sub(" ", str(text))
    detail = _SPACE_RE.sub(" ", detail).strip()
    return detail[:limit] or "unknown error"


def validate_request(request: RunRequest, rule_re: re.Pattern[str] = TOOL_RULE_RE) -> None:
    """Refuse anything that must not reach an argv. Shared by every adapter; `rule_re`
    is what one of its tool rules may look like (`Runtime.rule_re`)."""
    if not request.binary or request.binary.startswith("-"):
        raise InvalidRequest("binary must be a command name or path")
    if request.model and not profiles.is_valid_model(request.model):
        raise InvalidRequest(f"invalid model name: {clean_detail(request.model, 80)!r}")
    if not profiles.is_valid_reasoning_effort(request.reasoning_effort):
        raise InvalidRequest(
            f"invalid reasoning effort: {clean_detail(request.reasoning_effort, 40)!r}"
        )
    if request.base_url and not BASE_URL_RE.fullmatch(request.base_url):
        raise InvalidRequest(f"invalid base_url: {clean_detail(request.base_url, 80)!r}")
    if request.resume_session_id and not SESSION_ID_RE.fullmatch(request.resume_session_id):
        raise InvalidRequest("invalid session id for resume")
    if request.max_turns is not None and (
        isinstance(request.max_turns, bool)
        or not isinstance(request.max_turns, int)
        or request.max_turns < 1
    ):
        raise InvalidRequest("max_turns must be a positive integer")
    paths = [
        request.cwd,
        *(path for path in (request.api_key_file, request.home) if path is not None),
    ]
    if not all(isinstance(path, Path) and path.is_absolute() for path in paths):
        raise InvalidRequest("cwd, api_key_file and home must be absolute paths")
    for rule in request.allowed_tools:
        if not rule_re.fullmatch(rule):
            raise InvalidRequest(f"invalid tool rule: {clean_detail(rule, 80)!r}")
    validate_images(request.images)
    if request.tools is not None:
        try:
            request.tools.validate()
        except ToolServerError as error:
            raise InvalidRequest(str(error)) from None


def validate_images(images: tuple[Path, ...]) -> None:
    """Refuse pictures that must not reach a CLI: a relative path (it would be read from
    wherever the CLI runs), a line break or control character (it would end the prompt's
    reference), a comma (codex's `--image` and gemini's `--include-directories` split
    their values at commas; `runners.run_files` never makes one), more than `MAX_IMAGES`."""
    if len(images) > MAX_IMAGES:
        raise InvalidRequest(f"at most {MAX_IMAGES} images, not {len(images)}")
    for image in images:
        if not isinstance(image, Path) or not image.is_absolute():
            raise InvalidRequest(f"an image must be an absolute path: {clean_detail(image, 80)!r}")
        if _CONTROL_RE.search(str(image)) or "," in str(image):
            raise InvalidRequest(
                f"an image path holds a comma or a control character: {clean_detail(image, 80)!r}"
            )


def last_line(stderr: str) -> str:
    """The last line that says anything: where most CLIs put why they stopped."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def as_int(value: object) -> int | None:
    """A JSON number that is really a count (not a bool, not negative)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value >= 0 else None


def as_float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class Grant(enum.StrEnum):
    """What a read-only role may do besides reading files, named for the role's need.

    A role names grants (chatbot.domain.roles); each runtime writes them in its own
    syntax (`Runtime.grants`), so no role knows any CLI's permission language.
    """

    #: Read a commit, its diff and its history: `git show`, `git diff`, `git log`.
    GIT_READS = "git_reads"


@dataclass(frozen=True, slots=True)
class Cli:
    """An agent CLI program as npm ships it, and the version this project is tested with.

    This is the pin: `scripts/test` installs `package@tested` (tests/realcli/install.py),
    the README lists it, `chatbot check` compares the configured binary against it.
    Two runtimes may run one program (openrouter runs codex's): they share this record.
    """

    #: Its name in node_modules/.bin, and the usual `binary` of its runtime.
    command: str
    package: str
    tested: str

    @property
    def pin(self) -> str:
        return f"{self.package}@{self.tested}"


@dataclass(frozen=True, slots=True)
class KeyFile:
    """What `[runtimes.NAME] api_key_file` must be for a runtime; config asks it at load."""

    #: The runtime cannot run without a key file (openrouter).
    required: bool = False
    #: A key file is only for another endpoint: without `base_url` the CLI uses its own login.
    needs_base_url: bool = False
    #: The configuration error's words when the rule is broken.
    problem: str = ""

    def problem_with(self, api_key_file: Path | None, base_url: str | None) -> str | None:
        if api_key_file is None and self.required:
            return self.problem
        if api_key_file is not None and self.needs_base_url and not base_url:
            return self.problem
        return None


@dataclass(frozen=True, slots=True)
class Talking:
    """A runtime's interactive protocol: its own command line, driver and parser.

    `converse(pipe, request, conversation)` speaks the protocol over the child's stdin
    and stdout lines (`runners.process.Pipe`) with the bot's side of it
    (`runners.runtimes.talk.Conversation`): it sends the prompt, relays steers,
    interrupts and approvals, and returns when the run is over (then the bot closes
    stdin and ends the process group). `parse_output` reads the whole stdout afterwards,
    as strictly as the one-shot parser; an interrupted turn gives `interrupted=True`.
    """

    build_argv: Callable[[RunRequest], Invocation]
    converse: Callable[..., Awaitable[None]]
    parse_output: Callable[[str, Usage | None], RunOutput]
    step_of: Callable[[dict[str, object]], str | None] | None = None
    #: What it can do, for `chatbot check` and the answers to /steer, /approve, /interrupt.
    steers: bool = True
    asks_approval: bool = True
    interrupts: bool = True
    #: A run with `images` goes through this protocol even when nobody talks to it: the
    #: one-shot command line cannot carry pictures (claude: image blocks need stream-json).
    for_images: bool = False


@dataclass(frozen=True, slots=True)
class Runtime:
    """Everything about one agent CLI, exported as `RUNTIME` by its module and listed once
    in runners.runtimes.registry."""

    name: str
    #: The program it runs, with its pin.
    cli: Cli
    build_argv: Callable[[RunRequest], Invocation]
    #: The whole output once the run ended, read strictly.
    parse_output: Callable[[str, Usage | None], RunOutput]
    #: The step one line of its event stream shows, for the progress line; None: no progress.
    step_of: StepOf | None
    #: How it writes each grant, as rules for `RunRequest.allowed_tools`. Every grant is
    #: listed: () says its read-only mode already allows it (codex's sandbox runs reads).
    grants: Mapping[Grant, tuple[str, ...]]
    #: Its output carries what the run cost; else a run costs its tokens at the configured prices.
    reports_cost: bool
    #: It stops at `max_turns` itself: a builder's resumed runs get only the turns left.
    bounds_turns: bool
    #: It continues a session by id (`resume_session_id`), as the builder's turns do.
    resumes: bool
    key_file: KeyFile = KeyFile()
    #: It runs with the configured reasoning effort; else none is passed, and a run
    #: records none as the effort it ran with.
    takes_effort: bool = True
    #: What one of its tool rules may look like: checked here for its grants and by its
    #: argv builder for every rule a request carries, before any reaches a command line.
    rule_re: re.Pattern[str] = TOOL_RULE_RE
    #: Why a run that printed nothing on stdout failed, read from the tail of its stderr.
    stderr_reason: Callable[[str], str] = last_line
    #: Its interactive protocol (`Talking`); None: it cannot be
    #: steered, asked or interrupted, and runs one-shot only.
    talking: Talking | None = None
    #: The command that continues a session in a terminal on this host, for a person:
    #: `hand_over(request, session_id)` -> a shell line. None: it cannot be handed over.
    hand_over: Callable[[RunRequest, str], str] | None = None
    #: The provider it talks to when no `base_url` is configured, for the sandbox's
    #: forwarder; None: its endpoint depends on its login, and a sandboxed run of it
    #: without a `base_url` keeps the host's network.
    vendor_url: str | None = None
    #: The folders it keeps between runs besides `RunRequest.home` (sessions, its login),
    #: given the run's environment: made when missing, shown read-write in the sandbox.
    state_paths: Callable[[Mapping[str, str]], tuple[Path, ...]] = lambda env: ()
    #: It sandboxes the commands its agent runs by itself (codex: bubblewrap or Landlock;
    #: claude: it asks before anything outside its worktree); said by `chatbot check`.
    own_protection: str = ""
    #: The files in its state folders where it keeps a login it made itself; its agent
    #: can read them (said by `chatbot check`).
    login_files: tuple[str, ...] = ()
    #: Its own sandbox mounts a fresh /tmp over the commands it runs: its home, and the
    #: worktrees, must lie outside /tmp (`chatbot check` says so).
    hides_tmp: bool = False

    def __post_init__(self) -> None:
        # Checked at import: a new runtime that forgets a grant fails at once, not in a review.
        missing = [grant.value for grant in Grant if grant not in self.grants]
        if missing:
            raise ValueError(f"runtime {self.name}: no rules for the grants {missing}")
        for rules in self.grants.values():
            for rule in rules:
                if not self.rule_re.fullmatch(rule):
                    raise ValueError(f"runtime {self.name}: invalid tool rule {rule!r}")
        object.__setattr__(self, "grants", MappingProxyType(dict(self.grants)))

    @property
    def progress(self) -> bool:
        return self.step_of is not None

    def tool_rules(self, grants: Iterable[Grant]) -> tuple[str, ...]:
        """The role's grants in this CLI's syntax."""
        return tuple(rule for grant in grants for rule in self.grants[grant])
