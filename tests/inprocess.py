"""`chatbot ARGS` run inside the test's own process.

A `chatbot` program costs 0.6-1.7 CPU seconds before it does anything (Python's start and
the imports), and the suite ran about 200 of them to test what a command does, not that it
is a program: a fifth of the suite's CPU on a two-core box (issue 39). Here the same `main`
runs with its own argv, working folder, environment, standard streams, log handlers and
umask, all put back afterwards, and returns what `subprocess.run` would.

The process boundary itself (the entry point, `sys.exit`, signals, a serving bot) stays
tested by the tests that start the real program: tests/demo, tests/packaging,
tests/integration and the bots of tests/realcli.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from chatbot.app.cli import main
from chatbot.app.logformat import NOISY_LOGGERS

# One command at a time: the working folder, environment and streams are the process's.
_one_at_a_time = threading.Lock()
# Loggers the command sets levels on (logformat.setup); put back so that a test's caplog
# sees what it saw before.
_TOUCHED_LOGGERS = ("", *NOISY_LOGGERS)


def chatbot(
    *args: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """What `python -m chatbot ARGS` would return; `env` replaces the environment as
    `subprocess.run(env=...)` does. From a coroutine use `in_thread`: the command runs
    its own event loop."""
    argv = [str(arg) for arg in args]
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("chatbot() runs its own event loop: `await in_thread(...)` instead")
    with _one_at_a_time, _isolated(cwd, env) as (out, err):
        try:
            code = main(argv)
        except SystemExit as exit:  # argparse's usage errors, as the program would end
            code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    return subprocess.CompletedProcess(["chatbot", *argv], code, out.getvalue(), err.getvalue())


async def in_thread(
    *args: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`chatbot` from a coroutine: this loop keeps running meanwhile."""
    return await asyncio.to_thread(chatbot, *args, cwd=cwd, env=env)


@contextlib.contextmanager
def _isolated(
    cwd: Path | None, env: Mapping[str, str] | None
) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    folder = os.getcwd()
    environ = dict(os.environ)
    umask = os.umask(0o022)
    os.umask(umask)
    loggers = [logging.getLogger(name) for name in _TOUCHED_LOGGERS]
    levels = [logger.level for logger in loggers]
    root = logging.getLogger()
    handlers = list(root.handlers)
    # Without handlers `logging.basicConfig` in the command adds its own, on this stderr.
    for handler in handlers:
        root.removeHandler(handler)
    stdin = sys.stdin
    try:
        if cwd is not None:
            os.chdir(cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        sys.stdin = io.StringIO("")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield out, err
    finally:
        sys.stdin = stdin
        for handler in list(root.handlers):
            root.removeHandler(handler)
            handler.close()
        for handler in handlers:
            root.addHandler(handler)
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
        os.environ.clear()
        os.environ.update(environ)
        os.umask(umask)
        os.chdir(folder)
