"""Process and port helpers shared by the Prosody and Synapse launchers."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

POLL = 0.02


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1 (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def spawn(argv: list[str], *, log: Path, detach: bool, env: dict | None = None) -> subprocess.Popen:
    """Start a server in the foreground as our child.

    detach=True puts it in its own session so it outlives `scripts/servers
    start`; the test fixture keeps it in our process group so an interrupted
    pytest run takes it down too.
    """
    out = open(log, "ab")  # noqa: SIM115 - handed to the child
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=detach,
            env=env,
        )
    finally:
        out.close()


def _check_alive(p: subprocess.Popen, what: str) -> None:
    if p.poll() is not None:
        raise RuntimeError(f"{what} exited with status {p.returncode} during start-up")


def wait_for_port(host: str, port: int, p: subprocess.Popen, *, timeout: float) -> None:
    """Readiness probe for a server we just started (infrastructure, not a test wait)."""
    deadline = time.monotonic() + timeout
    while True:
        _check_alive(p, argv0(p))
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{host}:{port} not listening after {timeout}s")
        time.sleep(POLL)


def wait_for_path(path: Path, p: subprocess.Popen, *, timeout: float) -> None:
    """Readiness probe: a file the server makes once it serves (its socket)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        _check_alive(p, argv0(p))
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} not there after {timeout}s")
        time.sleep(POLL)


def wait_for_http(url: str, p: subprocess.Popen, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        _check_alive(p, argv0(p))
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} not healthy after {timeout}s")
        time.sleep(POLL)


def argv0(p: subprocess.Popen) -> str:
    args = p.args
    return " ".join(args[:3]) if isinstance(args, list) else str(args)


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        proc = psutil.Process(pid)
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def terminate(pid: int | None, *, timeout: float = 15) -> None:
    """TERM a server and wait for it to exit; KILL only if it ignores TERM."""
    if not pid:
        return
    try:
        proc = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    try:
        proc.wait(timeout)
    except psutil.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        proc.wait(5)
    except psutil.NoSuchProcess:
        pass


def tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return f"({path} missing)\n"
    return f"--- {path.name} ---\n" + "\n".join(text[-lines:]) + "\n"
