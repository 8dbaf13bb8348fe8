"""Run one child process for a model run, and make sure nothing of it outlives the run.

Agent CLIs start their own children (shells, language servers, test runners). A
timeout that only kills the CLI leaves those behind, still writing into a
worktree. So every child starts in a new process group, and every way a run can
end (timeout, silence, too much output, cancellation, even a normal exit) ends
with the whole group signalled: SIGTERM, a short grace, then SIGKILL.

The environment is explicit: the child sees `base_env` plus `extra_env` and
nothing else of this service's environment, so a chat token or an API key for
another runtime cannot leak into a model run by accident.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import os
import shutil
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners.child_io import Capture, ExitAwareProtocol, feed_stdin, signal_group, terminate_group
from runners.pipe import OwnerWait, Pipe

log = logging.getLogger(__name__)

# Variables a CLI needs to find itself and behave; everything else must be asked for.
DEFAULT_ENV_KEYS: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)

# Only the stream reader's line methods care about the limit; we read in chunks,
# but a raised limit keeps a future readline() on a multi-MB JSONL line from failing.
_STREAM_LIMIT = 32 * 1024 * 1024


class Outcome(enum.StrEnum):
    OK = "ok"
    EXIT_NONZERO = "exit_nonzero"
    TIMEOUT = "timeout"
    IDLE_TIMEOUT = "idle_timeout"
    OUTPUT_CAP = "output_cap"
    NOT_FOUND = "not_found"
    #: The conversation with the CLI broke (`run_process(converse=...)` raised).
    PROTOCOL = "protocol_error"


@dataclass(frozen=True, slots=True)
class ProcessLimits:
    """How long and how much a run may take.

    `idle_timeout` is the no-output watchdog: a CLI that neither prints nor exits
    for that long is assumed stuck (a model call that never returns, a tool
    waiting for a TTY) and is killed long before the wall-clock limit.
    `output_cap` bounds the captured stdout (the answer); of stderr, which
    is only diagnostics, just the last `stderr_tail` bytes are kept.
    """

    timeout: float = 1200.0
    idle_timeout: float | None = 300.0
    output_cap: int = 64 * 1024 * 1024
    stderr_tail: int = 16 * 1024
    kill_grace: float = 2.0

    def __post_init__(self) -> None:
        if self.timeout <= 0:
            raise ValueError("timeout must be positive")
        if self.idle_timeout is not None and self.idle_timeout <= 0:
            raise ValueError("idle_timeout must be positive or None")
        if self.output_cap <= 0 or self.stderr_tail <= 0:
            raise ValueError("output_cap and stderr_tail must be positive")
        if self.kill_grace < 0:
            raise ValueError("kill_grace must not be negative")


@dataclass(frozen=True, slots=True)
class ProcessResult:
    outcome: Outcome
    exit_code: int | None
    stdout: str = field(repr=False)
    stderr_tail: str = field(repr=False)
    duration: float
    error: str = ""
    pid: int | None = None

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK

    def __repr__(self) -> str:
        # Output can be megabytes and may quote the prompt; keep reprs short.
        return (
            f"ProcessResult(outcome={self.outcome.value!r}, exit_code={self.exit_code!r}, "
            f"duration={self.duration:.3f}, stdout=<{len(self.stdout)} chars>, "
            f"error={self.error!r})"
        )


def default_base_env(keys: Sequence[str] = DEFAULT_ENV_KEYS) -> dict[str, str]:
    """The few variables of this process a child may inherit by default."""
    return {key: os.environ[key] for key in keys if key in os.environ}


def _resolve_binary(binary: str, cwd: str | os.PathLike[str], env: Mapping[str, str]) -> str | None:
    """The executable to start, or None; a missing cwd is the caller's error, not the binary's."""
    if not os.path.isdir(cwd):
        raise NotADirectoryError(f"working directory does not exist: {cwd}")
    if os.sep in binary:
        return binary if os.path.isfile(binary) and os.access(binary, os.X_OK) else None
    return shutil.which(binary, path=env.get("PATH", os.defpath))


def process_identity(pid: int) -> str | None:
    """A token that names this very process: its pid plus its start time (Linux /proc).

    A pid alone can be reused after the process is gone; pid and start time together
    cannot, so a recorded identity never leads to killing a stranger.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22 (starttime) counts after the command name, which may hold spaces.
    fields = stat[stat.rfind(")") + 2 :].split()
    return f"{pid}:{fields[19]}" if len(fields) > 19 else None


def kill_orphan(identity: str) -> bool:
    """SIGKILL the process group a dead bot left running, if its leader is still that process."""
    pid = int(identity.split(":", 1)[0])
    if process_identity(pid) != identity:
        return False
    return signal_group(pid, signal.SIGKILL)


async def run_process(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    stdin: str | bytes = b"",
    base_env: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
    limits: ProcessLimits | None = None,
    on_spawn: Callable[[int], Awaitable[None]] | None = None,
    on_output: Callable[[bytes], None] | None = None,
    converse: Callable[[Pipe], Awaitable[None]] | None = None,
    hold: OwnerWait | None = None,
) -> ProcessResult:
    """Run `argv` in its own process group and return what happened.

    With `converse`, stdin stays open: `converse(pipe)` talks to the child (writes
    lines, reads its stdout lines) and returns when the conversation is over; then
    stdin is closed, the child gets `kill_grace` to exit, and the group is ended. The
    run is OK when the conversation ended well, whatever the exit status of a child
    stopped that way. A `converse` that raises ends the run as `Outcome.PROTOCOL`.

    `on_spawn(pgid)` is awaited once the child runs, so a caller can record the
    group and kill it later should this process die first (see `kill_orphan`).
    `on_output(chunk)` sees stdout as it arrives (a run's progress); what the
    result holds is the same either way. While `hold` is held (the agent waits for an
    owner's answer through the bot's tools) neither the idle watchdog nor the time limit
    counts.

    Never raises for the child's behaviour (non-zero exit, hang, flood, missing
    binary): those are outcomes. Raises `NotADirectoryError` for a missing `cwd`,
    which is a configuration error of the caller. Cancelling the awaiting task
    kills the whole group and re-raises the cancellation.
    """
    if not argv:
        raise ValueError("argv must not be empty")
    limits = limits or ProcessLimits()
    env = {**(default_base_env() if base_env is None else base_env), **(extra_env or {})}
    loop = asyncio.get_running_loop()
    started = loop.time()
    binary = argv[0]
    resolved = _resolve_binary(binary, cwd, env)
    if resolved is None:
        return ProcessResult(
            Outcome.NOT_FOUND, None, "", "", 0.0, error=f"binary not found: {binary}"
        )
    data = stdin.encode() if isinstance(stdin, str) else stdin
    try:
        proc, exited = await _spawn(resolved, argv[1:], cwd, env)
    except (FileNotFoundError, PermissionError) as exc:
        return ProcessResult(
            Outcome.NOT_FOUND,
            None,
            "",
            "",
            loop.time() - started,
            error=f"cannot execute {binary}: {exc.strerror or exc}",
        )
    if on_spawn is not None:
        await _announce(on_spawn, proc.pid)
    child = _Child(proc, exited, limits, hold, started, on_output)
    child.start_io(data, converse)
    try:
        outcome, error = await child.watch()
        await child.end_group()
    except asyncio.CancelledError:
        # /cancel must not leave an agent running: kill at once, no grace.
        log.info("run of %s cancelled; killing process group %s", binary, child.pgid)
        await child.kill_at_once()
        raise
    finally:
        await child.close()
    result = child.result(outcome, error)
    log.debug("process %s finished: %r", binary, result)
    return result


async def _spawn(
    binary: str, args: Sequence[str], cwd: str | os.PathLike[str], env: Mapping[str, str]
) -> tuple[asyncio.subprocess.Process, asyncio.Future[None]]:
    """The child started in a new session (its own process group), with the future of
    its own exit: not proc.wait(), which also waits for every pipe to close, and a
    helper that inherited stdout can hold it open long after the CLI has exited."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: ExitAwareProtocol(limit=_STREAM_LIMIT, loop=loop),
        binary,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    return asyncio.subprocess.Process(transport, protocol, loop), protocol.exited


async def _announce(on_spawn: Callable[[int], Awaitable[None]], pgid: int) -> None:
    """`on_spawn(pgid)`; should it fail (or be cancelled), the child is killed at once."""
    try:
        await on_spawn(pgid)
    except BaseException:
        signal_group(pgid, signal.SIGKILL)
        raise


class _Child:
    """A started child while its run lasts: its group, its pipes and the watchdogs' clocks."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        exited: asyncio.Future[None],
        limits: ProcessLimits,
        hold: OwnerWait | None,
        started: float,
        on_output: Callable[[bytes], None] | None,
    ) -> None:
        self.proc = proc
        self.pgid = proc.pid  # a new session's leader: pgid == pid
        self.exited = exited
        self.limits = limits
        self.hold = hold
        self.started = started
        self.loop = asyncio.get_running_loop()
        self.capture = Capture(limits.output_cap, limits.stderr_tail, on_output)
        self.pipe: Pipe | None = None
        self.talker: asyncio.Future[None] | None = None

    def start_io(self, data: bytes, converse: Callable[[Pipe], Awaitable[None]] | None) -> None:
        """Stdin fed `data` and closed, or kept open for `converse`; both outputs read."""
        proc, capture = self.proc, self.capture
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        if converse is None:
            self.feeder = asyncio.ensure_future(feed_stdin(proc.stdin, data))
        else:
            self.pipe = Pipe(proc.stdin, capture)
            capture.on_line_chunk = self.pipe._feed
            capture.on_end = self.pipe._ended
            self.feeder = asyncio.ensure_future(asyncio.sleep(0))
            self.talker = asyncio.ensure_future(converse(self.pipe))
        self.readers = asyncio.gather(
            capture.read_stdout(proc.stdout), capture.read_stderr(proc.stderr)
        )
        self.capped = asyncio.ensure_future(capture.capped.wait())

    async def watch(self) -> tuple[Outcome | None, str]:
        """Until the leader exits or the run must end: why it must (None: it exited)."""
        limits = self.limits
        while not self.exited.done():
            now = self.loop.time()
            deadline = self._deadline(now)
            if now >= deadline:
                return Outcome.TIMEOUT, f"timed out after {limits.timeout:g}s"
            wake = deadline
            silent_until = self._silent_until(now)
            if silent_until is not None:
                if now >= silent_until:
                    return Outcome.IDLE_TIMEOUT, f"no output for {limits.idle_timeout:g}s"
                wake = min(wake, silent_until)
            watched: set[asyncio.Future[Any]] = {self.exited, self.capped}
            if self.talker is not None:
                watched.add(self.talker)
            done, _ = await asyncio.wait(
                watched, timeout=wake - now, return_when=asyncio.FIRST_COMPLETED
            )
            if self.capped in done:
                return Outcome.OUTPUT_CAP, _cap_error(limits)
            if self.talker is not None and self.talker in done:
                return await self._conversation_over(self.talker)
        return None, ""

    def _deadline(self, now: float) -> float:
        """The time limit, moved on by every second a `hold` was held."""
        held = self.hold.held(now) if self.hold is not None else 0.0
        return self.started + self.limits.timeout + held

    def _silent_until(self, now: float) -> float | None:
        """When the idle watchdog fires (None: no idle limit). Waiting for a person is
        no silence; the silence starts anew when the wait ends."""
        if self.limits.idle_timeout is None:
            return None
        capture, hold = self.capture, self.hold
        if capture.waiting or (hold is not None and hold.waits):
            capture.last_output = now
        elif hold is not None and hold.ended_at is not None:
            capture.last_output = max(capture.last_output, hold.ended_at)
        return capture.last_output + self.limits.idle_timeout

    async def _conversation_over(self, talker: asyncio.Future[None]) -> tuple[Outcome, str]:
        if talker.exception() is not None:
            return Outcome.PROTOCOL, f"the conversation with the CLI broke: {talker.exception()}"
        # Over: end of input, a moment to exit by itself, then the group ends.
        assert self.pipe is not None
        self.pipe.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.exited), timeout=self.limits.kill_grace)
        return Outcome.OK, ""

    async def end_group(self) -> None:
        """The leader is gone or must go; either way its helpers go with it."""
        grace = self.limits.kill_grace
        await terminate_group(self.pgid, self.exited, self.readers, grace)
        with contextlib.suppress(TimeoutError):
            # SIGKILL was sent; a leader that is still not reaped after the grace is
            # left to close() rather than hanging this run forever.
            await asyncio.wait_for(asyncio.shield(self.exited), timeout=grace)
        with contextlib.suppress(TimeoutError):
            # A process that left our group may still hold the pipe; do not wait for it.
            await asyncio.wait_for(asyncio.shield(self.readers), timeout=grace)

    async def kill_at_once(self) -> None:
        signal_group(self.pgid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            # Reap the leader so the caller sees it gone when the cancel returns.
            await asyncio.wait_for(
                asyncio.shield(self.exited), timeout=max(self.limits.kill_grace, 1.0)
            )

    async def close(self) -> None:
        """Every task of the run ended, and the group killed should the leader live on."""
        ends: list[asyncio.Future[Any]] = [self.feeder, self.readers, self.exited, self.capped]
        if self.talker is not None:
            ends.append(self.talker)
        for task in ends:
            task.cancel()
        await asyncio.gather(*ends, return_exceptions=True)
        if self.proc.returncode is None:
            signal_group(self.pgid, signal.SIGKILL)

    def result(self, outcome: Outcome | None, error: str) -> ProcessResult:
        exit_code = self.proc.returncode
        if outcome in (None, Outcome.OK) and self.capture.capped.is_set():
            # The flood and the exit can arrive together; a truncated answer is never "ok".
            outcome, error = Outcome.OUTPUT_CAP, _cap_error(self.limits)
        if outcome is None:
            if exit_code == 0:
                outcome = Outcome.OK
            else:
                outcome, error = Outcome.EXIT_NONZERO, f"exited with status {exit_code}"
        return ProcessResult(
            outcome=outcome,
            exit_code=exit_code,
            stdout=self.capture.stdout.decode("utf-8", errors="replace"),
            stderr_tail=self.capture.stderr.decode("utf-8", errors="replace"),
            duration=self.loop.time() - self.started,
            error=error,
            pid=self.proc.pid,
        )


def _cap_error(limits: ProcessLimits) -> str:
    return f"output exceeded the cap of {limits.output_cap} bytes"
