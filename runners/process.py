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

from runners.pipe import Hold, Pipe

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

_READ_CHUNK = 64 * 1024
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


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Signal a process group; False when no process of it is left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # A pid reused by someone else's group; never ours to signal.
        log.warning("not allowed to signal process group %s", pgid)
        return False
    return True


class _Capture:
    """Collects stdout up to a cap and the tail of stderr, and notes when output arrives."""

    def __init__(self, limits: ProcessLimits, on_output: Callable[[bytes], None] | None) -> None:
        self._limits = limits
        self._on_output = on_output
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.capped = asyncio.Event()
        self.last_output = asyncio.get_running_loop().time()
        #: The child waits for a person (Pipe.waiting_on_people): silence is no hang.
        self.waiting = False
        self.on_line_chunk: Callable[[bytes], None] | None = None
        self.on_end: Callable[[], None] | None = None

    async def read_stdout(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_READ_CHUNK):
            self.last_output = asyncio.get_running_loop().time()
            room = self._limits.output_cap - len(self.stdout)
            self.stdout += chunk[: max(room, 0)]
            if self._on_output is not None and room > 0:
                self._on_output(chunk[:room])
            if self.on_line_chunk is not None and room > 0:
                self.on_line_chunk(chunk[:room])
            if len(chunk) > room:
                self.capped.set()
                break
        if self.on_end is not None:
            self.on_end()

    async def read_stderr(self, stream: asyncio.StreamReader) -> None:
        tail = self._limits.stderr_tail
        while chunk := await stream.read(_READ_CHUNK):
            self.last_output = asyncio.get_running_loop().time()
            self.stderr += chunk
            if len(self.stderr) > tail:
                del self.stderr[:-tail]


async def _feed_stdin(stream: asyncio.StreamWriter, data: bytes) -> None:
    # A child may exit without reading its stdin; that is its business, not an error here.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        if data:
            stream.write(data)
            await stream.drain()
    stream.close()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        await stream.wait_closed()


async def _terminate_group(
    pgid: int, exited: asyncio.Future[None], readers: asyncio.Future[Any], grace: float
) -> None:
    """SIGTERM the group, give it `grace` seconds, then SIGKILL whatever is left.

    Readers reaching EOF means every process holding the pipes is gone, so that
    (with the leader's exit) is what the grace period waits for. The SIGKILL is in
    a `finally` so that a second cancellation during the grace still kills.
    """
    try:
        if _signal_group(pgid, signal.SIGTERM):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(asyncio.shield(exited), asyncio.shield(readers)),
                    timeout=grace,
                )
    finally:
        _signal_group(pgid, signal.SIGKILL)


class _ExitAwareProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The stream protocol plus a future that resolves when the child itself exits."""

    def __init__(self, *, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


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
    return _signal_group(pid, signal.SIGKILL)


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
    hold: Hold | None = None,
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
    env = dict(default_base_env() if base_env is None else base_env)
    if extra_env:
        env.update(extra_env)
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
        transport, protocol = await loop.subprocess_exec(
            lambda: _ExitAwareProtocol(limit=_STREAM_LIMIT, loop=loop),
            resolved,
            *argv[1:],
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        proc = asyncio.subprocess.Process(transport, protocol, loop)
    except (FileNotFoundError, PermissionError) as exc:
        return ProcessResult(
            Outcome.NOT_FOUND,
            None,
            "",
            "",
            loop.time() - started,
            error=f"cannot execute {binary}: {exc.strerror or exc}",
        )
    # start_new_session makes the child a session and group leader: pgid == pid.
    pgid = proc.pid
    if on_spawn is not None:
        try:
            await on_spawn(pgid)
        except BaseException:
            _signal_group(pgid, signal.SIGKILL)
            raise
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    capture = _Capture(limits, on_output)
    talker: asyncio.Future[None] | None = None
    if converse is None:
        feeder = asyncio.ensure_future(_feed_stdin(proc.stdin, data))
    else:
        pipe = Pipe(proc.stdin, capture)
        capture.on_line_chunk = pipe._feed
        capture.on_end = pipe._ended
        feeder = asyncio.ensure_future(asyncio.sleep(0))
        talker = asyncio.ensure_future(converse(pipe))
    readers = asyncio.gather(capture.read_stdout(proc.stdout), capture.read_stderr(proc.stderr))
    # Not proc.wait(): that also waits for every pipe to close, which a helper that
    # inherited stdout can hold open long after the CLI itself has exited.
    exited = protocol.exited
    capped = asyncio.ensure_future(capture.capped.wait())
    deadline = started + limits.timeout
    outcome: Outcome | None = None
    error = ""
    talked = False
    try:
        while not exited.done():
            now = loop.time()
            if hold is not None:
                deadline = started + limits.timeout + hold.held(now)
            if now >= deadline:
                outcome, error = Outcome.TIMEOUT, f"timed out after {limits.timeout:g}s"
                break
            wake = deadline
            if limits.idle_timeout is not None:
                if capture.waiting or (hold is not None and hold.waits):
                    capture.last_output = now
                elif hold is not None and hold.ended_at is not None:
                    capture.last_output = max(capture.last_output, hold.ended_at)
                silent_until = capture.last_output + limits.idle_timeout
                if now >= silent_until:
                    outcome = Outcome.IDLE_TIMEOUT
                    error = f"no output for {limits.idle_timeout:g}s"
                    break
                wake = min(wake, silent_until)
            watched: set[asyncio.Future[Any]] = {exited, capped}
            if talker is not None and not talked:
                watched.add(talker)
            done, _ = await asyncio.wait(
                watched, timeout=wake - now, return_when=asyncio.FIRST_COMPLETED
            )
            if capped in done:
                outcome = Outcome.OUTPUT_CAP
                error = f"output exceeded the cap of {limits.output_cap} bytes"
                break
            if talker is not None and talker in done:
                talked = True
                if talker.exception() is not None:
                    outcome = Outcome.PROTOCOL
                    error = f"the conversation with the CLI broke: {talker.exception()}"
                    break
                # Over: end of input, a moment to exit by itself, then the group ends.
                pipe.close()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(exited), timeout=limits.kill_grace)
                outcome = Outcome.OK
                break
        # The leader is gone or must go; either way its helpers go with it.
        await _terminate_group(pgid, exited, readers, limits.kill_grace)
        with contextlib.suppress(TimeoutError):
            # SIGKILL was sent; a leader that is still not reaped after the grace is
            # left to the finally below rather than hanging this run forever.
            await asyncio.wait_for(asyncio.shield(exited), timeout=limits.kill_grace)
        with contextlib.suppress(TimeoutError):
            # A process that left our group may still hold the pipe; do not wait for it.
            await asyncio.wait_for(asyncio.shield(readers), timeout=limits.kill_grace)
    except asyncio.CancelledError:
        # /cancel must not leave an agent running: kill at once, no grace.
        log.info("run of %s cancelled; killing process group %s", binary, pgid)
        _signal_group(pgid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            # Reap the leader so the caller sees it gone when the cancel returns.
            await asyncio.wait_for(asyncio.shield(exited), timeout=max(limits.kill_grace, 1.0))
        raise
    finally:
        ends: list[asyncio.Future[Any]] = [
            feeder,
            readers,
            exited,
            capped,
            *([talker] if talker is not None else []),
        ]
        for task in ends:
            task.cancel()
        await asyncio.gather(*ends, return_exceptions=True)
        if proc.returncode is None:
            _signal_group(pgid, signal.SIGKILL)

    exit_code = proc.returncode
    if outcome in (None, Outcome.OK) and capture.capped.is_set():
        # The flood and the exit can arrive together; a truncated answer is never "ok".
        outcome = Outcome.OUTPUT_CAP
        error = f"output exceeded the cap of {limits.output_cap} bytes"
    if outcome is None:
        if exit_code == 0:
            outcome = Outcome.OK
        else:
            outcome, error = Outcome.EXIT_NONZERO, f"exited with status {exit_code}"
    result = ProcessResult(
        outcome=outcome,
        exit_code=exit_code,
        stdout=capture.stdout.decode("utf-8", errors="replace"),
        stderr_tail=capture.stderr.decode("utf-8", errors="replace"),
        duration=loop.time() - started,
        error=error,
        pid=proc.pid,
    )
    log.debug("process %s finished: %r", binary, result)
    return result
