"""Build the command line, run it, parse what it printed: one model run end to end."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from runners.pipe import OwnerWait, Pipe
from runners.process import Outcome, ProcessLimits, ProcessResult, default_base_env, run_process
from runners.runtimes.base import (
    Invocation,
    RunnerError,
    RunOutput,
    RunRequest,
    Runtime,
    Talking,
    Usage,
    clean_detail,
)
from runners.runtimes.confine import confined, make_folders, sandbox_failure
from runners.runtimes.progress import StepReader
from runners.runtimes.registry import get_runtime
from runners.runtimes.talk import ApprovalAsked, Conversation, Decision
from runners.sandbox import NetworkAccess, Sandbox, relay_url

log = logging.getLogger(__name__)

REDACTED = "[redacted]"


class KeyFileError(RunnerError):
    """A key file named in the configuration is missing, unreadable or empty."""


@dataclass(frozen=True, slots=True)
class RunResult:
    """The run as the worker records it: outcome, timing, parsed output, one failure reason."""

    runtime: str
    outcome: Outcome
    exit_code: int | None
    duration: float
    output: RunOutput
    failure: str | None
    stderr_tail: str = field(repr=False, default="")

    @property
    def ok(self) -> bool:
        return self.failure is None


async def _nobody_answers(asked: ApprovalAsked) -> Decision:
    return Decision(False, "nobody answers a one-shot run: do without it")


def build_invocation(runtime: str, request: RunRequest) -> Invocation:
    return get_runtime(runtime).build_argv(request)


def _read_secret(variable: str, path: Path) -> str:
    try:
        value = path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise KeyFileError(
            f"cannot read the key file for {variable} at {path}: {error.strerror or error}"
        ) from None
    if not value:
        raise KeyFileError(f"the key file for {variable} at {path} is empty")
    return value


def write_files(files: Mapping[Path, str]) -> None:
    """Put the files a CLI reads at start (`Invocation.files`) in place.

    A file already holding its text is left alone, so runs do not rewrite what they
    share; one that differs is replaced whole (a temporary file renamed over it), so a
    run starting beside this one reads the old text or the new, never half of one.
    Folders made here are the bot's own: readable by its user only.
    """
    for path, text in files.items():
        try:
            if path.read_text(encoding="utf-8") == text:
                continue
        except (OSError, UnicodeDecodeError):
            pass  # missing, unreadable or damaged: written below
        try:
            make_folders(path.parent)
            handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(text)
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as error:
            raise RunnerError(
                f"cannot write {path} for the agent CLI: {error.strerror or error}"
            ) from None


def _redact(text: str, secrets: Mapping[str, str]) -> str:
    for value in secrets.values():
        text = text.replace(value, REDACTED)
    return text


def _failure(
    runtime: str, process: ProcessResult, output: RunOutput, stderr_reason: Callable[[str], str]
) -> str | None:
    """One reason, most useful first: what the CLI said, else what the process did."""
    if process.outcome is Outcome.OK:
        return output.failure
    reason = f"{runtime}: {process.error}"
    if process.outcome is Outcome.EXIT_NONZERO:
        printed = process.stdout.strip()
        detail = output.failure if printed else stderr_reason(process.stderr_tail)
        if detail:
            reason = f"{reason}: {detail}"
    return clean_detail(reason)


async def run_model(
    runtime: str,
    request: RunRequest,
    *,
    limits: ProcessLimits | None = None,
    base_env: Mapping[str, str] | None = None,
    previous_usage: Usage | None = None,
    on_spawn: Callable[[int], Awaitable[None]] | None = None,
    on_step: Callable[[str], None] | None = None,
    conversation: Conversation | None = None,
    sandbox: Sandbox | None = None,
    hold: OwnerWait | None = None,
) -> RunResult:
    """Run one model turn and return its normalised result.

    With a `conversation`, a runtime that can talk (`Runtime.talking`) runs through its
    interactive protocol: the bot may steer, interrupt and answer approvals while it
    works. One that cannot runs one-shot as ever, and the conversation stays unused.

    With a `sandbox` the CLI runs inside it (`runners.sandbox`): it sees what the
    sandbox shows, and with the provider network its requests go through a forwarder
    that holds the keys; the CLI inside never gets them.

    With `request.tools` the CLI is given the bot's MCP server for this run (the sandbox
    shows its folder); `hold` is held while a tool waits for a person, and the idle
    watchdog waits with it.

    `on_step(text)` hears each step the CLI reports while it works (a command run,
    a file changed, a tool used), for a progress line; the result does not depend on it.

    Raises `InvalidRequest` (bad model, effort, session id, runtime) before
    anything runs, `KeyFileError` for an unusable key file and `RunnerError`
    for a missing working directory or a file the CLI needs that cannot be written
    (all are `RunnerError`); every failure
    of the CLI itself (missing binary, exit status, timeout, damaged output) is
    a `RunResult` with `failure` set. Cancelling kills the CLI's process group.
    """
    way = _way(get_runtime(runtime), request, conversation, sandbox)
    env = dict(default_base_env() if base_env is None else base_env)
    invocation = way.build_argv(way.request)
    secrets = {
        variable: _read_secret(variable, path)
        for variable, path in invocation.secret_env_files.items()
    }
    if invocation.files:
        await asyncio.to_thread(write_files, invocation.files)
    _log_start(runtime, way, invocation)
    step_of = way.step_of
    process = await _run_cli(
        way,
        invocation,
        env,
        secrets,
        limits=limits,
        on_spawn=on_spawn,
        on_output=StepReader(step_of, on_step).feed if on_step and step_of is not None else None,
        hold=hold,
    )
    return _result(runtime, way, process, secrets, previous_usage)


@dataclass(frozen=True, slots=True)
class _Way:
    """How one run goes: one-shot or through the runtime's interactive protocol, with its
    request and sandbox as they end up (a forwarded provider is reached via the relay)."""

    record: Runtime
    talking: Talking | None
    conversation: Conversation | None
    request: RunRequest
    sandbox: Sandbox | None
    #: The provider's endpoint ("" when the CLI's login decides it).
    upstream: str

    @property
    def forwarded(self) -> bool:
        sandbox = self.sandbox
        return (
            sandbox is not None
            and sandbox.network is NetworkAccess.PROVIDER
            and bool(self.upstream)
        )

    @property
    def build_argv(self) -> Callable[[RunRequest], Invocation]:
        return self.talking.build_argv if self.talking else self.record.build_argv

    @property
    def parse_output(self) -> Callable[[str, Usage | None], RunOutput]:
        return self.talking.parse_output if self.talking else self.record.parse_output

    @property
    def step_of(self) -> Callable[[dict[str, object]], str | None] | None:
        return self.talking.step_of if self.talking else self.record.step_of


def _way(
    record: Runtime,
    request: RunRequest,
    conversation: Conversation | None,
    sandbox: Sandbox | None,
) -> _Way:
    if conversation is None and request.images and record.talking and record.talking.for_images:
        # Only its protocol carries pictures: a one-shot run speaks it with nobody on the
        # other side (nothing to steer; what it would ask is denied, as one-shot refuses).
        conversation = Conversation(_nobody_answers)
    talking = record.talking if conversation is not None else None
    upstream = request.base_url or record.vendor_url or ""
    if sandbox is not None and sandbox.network is NetworkAccess.PROVIDER and not upstream:
        # Its endpoint depends on its login (codex: API or ChatGPT): nothing to forward to,
        # so the run keeps the host's network; `chatbot check` says so.
        sandbox = replace(sandbox, network=NetworkAccess.OPEN)
    way = _Way(record, talking, conversation, request, sandbox, upstream)
    if way.forwarded:
        # The CLI inside reaches its provider only through the relay and the forwarder.
        way = replace(way, request=replace(request, base_url=relay_url(upstream)))
    return way


def _log_start(runtime: str, way: _Way, invocation: Invocation) -> None:
    request, sandbox = way.request, way.sandbox
    log.info(
        "starting %s run%s: mode=%s model=%s effort=%s resume=%s cwd=%s sandbox=%s",
        runtime,
        " (interactive)" if way.talking else "",
        request.mode.value,
        request.model or "(default)",
        request.reasoning_effort or "(default)",
        bool(request.resume_session_id),
        invocation.cwd,
        sandbox.network.value if sandbox else "none",
    )
    log.debug("argv: %s", invocation.argv)


def _conversing(way: _Way) -> Callable[[Pipe], Awaitable[None]] | None:
    """What talks to the CLI through its pipe, for a run through its protocol."""
    talking, conversation = way.talking, way.conversation
    if talking is None:
        return None
    assert conversation is not None

    async def converse(pipe: Pipe) -> None:
        await talking.converse(pipe, way.request, conversation)

    return converse


async def _run_cli(
    way: _Way,
    invocation: Invocation,
    env: Mapping[str, str],
    secrets: Mapping[str, str],
    *,
    limits: ProcessLimits | None,
    on_spawn: Callable[[int], Awaitable[None]] | None,
    on_output: Callable[[bytes], None] | None,
    hold: OwnerWait | None,
) -> ProcessResult:
    """The CLI's process, inside the sandbox if there is one (and the provider's forwarder
    for as long as it runs)."""
    async with contextlib.AsyncExitStack() as stack:
        argv: Sequence[str] = invocation.argv
        child_env = {**invocation.env_extras, **secrets}
        if way.sandbox is not None:
            forwarding = None
            if way.forwarded:
                # aiohttp only where a run is forwarded: the stand-in CLIs import this module.
                from runners.forwarder import forwarding as forward

                forwarding = await stack.enter_async_context(forward(way.upstream, secrets))
                # Keys stay outside: the CLI gets placeholders the forwarder swaps back.
                child_env.update(forwarding.placeholders)
            argv = await asyncio.to_thread(
                confined,
                way.record,
                invocation,
                way.sandbox,
                {**env, **child_env},
                forwarding,
                way.request.tools,
            )
        try:
            return await run_process(
                argv,
                cwd=invocation.cwd,
                stdin=invocation.stdin,
                base_env=env,
                extra_env=child_env,
                limits=limits,
                on_spawn=on_spawn,
                on_output=on_output,
                converse=_conversing(way),
                hold=hold,
            )
        except NotADirectoryError as error:
            raise RunnerError(str(error)) from None


def _result(
    runtime: str,
    way: _Way,
    process: ProcessResult,
    secrets: Mapping[str, str],
    previous_usage: Usage | None,
) -> RunResult:
    """What the run gave, its keys redacted, with one failure reason."""
    process = replace(
        process,
        stdout=_redact(process.stdout, secrets),
        stderr_tail=_redact(process.stderr_tail, secrets),
    )
    output = way.parse_output(process.stdout, previous_usage)
    failure = _failure(runtime, process, output, way.record.stderr_reason)
    if failure and way.sandbox is not None and not process.stdout.strip():
        failure = sandbox_failure(way.sandbox, process.stderr_tail) or failure
    failure = _redact(failure, secrets) if failure else None
    result = RunResult(
        runtime=runtime,
        outcome=process.outcome,
        exit_code=process.exit_code,
        duration=process.duration,
        output=output,
        failure=failure,
        stderr_tail=process.stderr_tail,
    )
    log.info(
        "%s run finished: outcome=%s exit=%s duration=%.2fs failure=%s",
        runtime,
        process.outcome.value,
        process.exit_code,
        process.duration,
        failure,
    )
    return result
