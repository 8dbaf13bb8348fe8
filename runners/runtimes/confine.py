"""A CLI's command line inside the sandbox (`runners.sandbox`), with what it must be shown
(its program and interpreter, its state, the relay and the bot's tools), and why a
sandbox that did not start failed. `run_model` runs a CLI through it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from runners.runtimes.base import Invocation, RunnerError, Runtime, clean_detail, last_line
from runners.sandbox import (
    Sandbox,
    SandboxError,
    program_paths,
    python_paths,
    relay_argv,
    wrap,
)
from runners.tool_server import ToolServer

if TYPE_CHECKING:
    from runners.forwarder import Forwarding


def make_folders(folder: Path) -> None:
    # mkdir(parents=True) gives the parents the umask's mode, not 0o700.
    missing = []
    while not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        each.mkdir(mode=0o700, exist_ok=True)


def confined(
    record: Runtime,
    invocation: Invocation,
    sandbox: Sandbox,
    env: Mapping[str, str],
    forwarding: Forwarding | None,
    invocation_tools: ToolServer | None = None,
) -> Sequence[str]:
    """The invocation's command line inside the sandbox, with what this CLI needs shown:
    its program and interpreter, its state, and the relay when the provider is forwarded.
    A program that is not there is left to `run_process` to report as not found."""
    try:
        program, program_folders = program_paths(invocation.argv[0], env)
    except FileNotFoundError:
        return invocation.argv
    argv: list[str] = [program, *invocation.argv[1:]]
    readable = [*sandbox.readable, *program_folders]
    if forwarding is not None:
        argv = relay_argv(argv)
    if forwarding is not None or invocation_tools is not None:
        readable += python_paths()
    if invocation_tools is not None:
        # The pump and the socket, at the same path as outside, read-only: a socket is
        # connected to, never written as a file.
        readable.append(invocation_tools.folder)
    state = record.state_paths(env)
    for folder in state:
        make_folders(folder)
    inside = replace(
        sandbox,
        readable=tuple(readable),
        writable=(*sandbox.writable, *state),
        provider_socket=forwarding.socket if forwarding else None,
        files={Path("/etc/resolv.conf"): forwarding.resolv_conf} if forwarding else {},
        env={"TMPDIR": "/tmp", **sandbox.env},
    )
    try:
        return wrap(argv, invocation.cwd, inside)
    except SandboxError as error:
        raise RunnerError(f"the sandbox ({sandbox.tool}) cannot be made: {error}") from None


def sandbox_failure(sandbox: Sandbox, stderr: str) -> str | None:
    """Why the sandbox itself did not start (bubblewrap says "bwrap: ..."), or None."""
    said = last_line(stderr)
    if not said.startswith(f"{Path(sandbox.tool).name}:"):
        return None
    return clean_detail(
        f"the sandbox ({sandbox.tool}) could not start: {said}; `chatbot check` says what "
        'this host allows, [bot] sandbox = "off" runs agents without it'
    )
