"""Shared machinery of the scripted `codex` and `claude` (stdlib only).

tests/bin/README.md describes the scenario format and the variables read.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn, TextIO

from runners.scripted import mcp_calls

SCENARIO_ENV = "FAKE_CLI_SCENARIO"
STATE_ENV = "FAKE_CLI_STATE"
LOG_ENV = "FAKE_CLI_LOG"
# Every scripted wait times this: the demo's slow card, run fast by a test.
TIME_SCALE_ENV = "FAKE_CLI_TIME_SCALE"


def scaled(seconds: float) -> float:
    try:
        factor = float(os.environ.get(TIME_SCALE_ENV, "1"))
    except ValueError:
        factor = 1.0
    return max(0.0, seconds * factor)


class UsageError(Exception):
    """A command line the real CLI would refuse."""


def usage_exit(cli: str, message: str, said: str, status: int) -> NoReturn:
    """Refuse a command line as the real CLI does: its words on stderr, its exit status."""
    sys.stderr.write(said)
    log_call(cli, {"usage_error": message})
    sys.exit(status)


def tested_version(cli: str) -> str:
    """The version the project pins for the real CLI (runners/versions.py), so
    `chatbot check` against a stand-in reports what the stand-in imitates."""
    from runners.versions import TESTED

    return TESTED[cli][1]


def in_git_repository(path: Path) -> bool:
    """As git finds one: a `.git` file (a worktree's) or a `.git` folder holding HEAD. An
    empty `.git` folder is none: codex's sandbox leaves one in /tmp when a command it
    runs is killed (an interrupted or cancelled run)."""
    for folder in (path, *path.parents):
        found = folder / ".git"
        if found.is_file() or (found / "HEAD").is_file():
            return True
    return False


def fail(message: str, code: int = 1) -> NoReturn:
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.exit(code)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[TextIO]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield handle
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _scenario_path() -> Path:
    value = os.environ.get(SCENARIO_ENV)
    if not value:
        fail(f"fake cli: {SCENARIO_ENV} is not set", 3)
    return Path(value)


def _load_turns(path: Path) -> list[dict[str, Any]]:
    if path.is_dir():
        files = sorted(p for p in path.glob("*.json") if not p.name.startswith("."))
        turns = [json.loads(p.read_text(encoding="utf-8")) for p in files]
    else:
        data = json.loads(path.read_text(encoding="utf-8"))
        turns = data["turns"] if isinstance(data, dict) else data
    if not all(isinstance(turn, dict) for turn in turns):
        fail("fake cli: every scenario turn must be a JSON object", 3)
    return turns


def _state_path(scenario: Path) -> Path:
    value = os.environ.get(STATE_ENV)
    if value:
        return Path(value)
    return scenario / ".state.json" if scenario.is_dir() else Path(f"{scenario}.state.json")


class State:
    """Consumed turns and known sessions, shared by every call of one scenario."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.consumed: list[int] = data.get("consumed", [])
        self.sessions: dict[str, dict[str, int]] = data.get("sessions", {})
        self.calls: int = data.get("calls", 0)
        # How often each turn (by index) was used, for {{AGAIN}}.
        self.uses: dict[str, int] = data.get("uses", {})

    def dump(self) -> str:
        return json.dumps(
            {
                "consumed": self.consumed,
                "sessions": self.sessions,
                "calls": self.calls,
                "uses": self.uses,
            }
        )


@contextlib.contextmanager
def scenario_state() -> Iterator[tuple[list[dict[str, Any]], State]]:
    """Yield (turns, state) under an exclusive lock; the state is saved on exit."""
    scenario = _scenario_path()
    turns = _load_turns(scenario)
    with _locked(_state_path(scenario)) as handle:
        handle.seek(0)
        raw = handle.read()
        state = State(json.loads(raw) if raw.strip() else {})
        yield turns, state
        handle.seek(0)
        handle.truncate()
        handle.write(state.dump())
        handle.flush()


def pick_turn(
    cli: str, prompt: str, turns: list[dict[str, Any]], state: State
) -> tuple[int, dict[str, Any]]:
    """The first unconsumed turn for this CLI whose `match` occurs in the prompt (a list:
    each of its strings does); its `capture` filled in from the prompt."""
    for index, turn in enumerate(turns):
        if index in state.consumed:
            continue
        if turn.get("cli") not in (None, cli):
            continue
        match = turn.get("match")
        wanted = [match] if isinstance(match, str) else list(match or [])
        if any(part not in prompt for part in wanted):
            continue
        if not turn.get("repeat"):
            state.consumed.append(index)
        uses = state.uses[str(index)] = state.uses.get(str(index), 0) + 1
        return index, filled({**turn, "_use": uses}, captured(turn, prompt))
    fail(f"fake {cli}: no scenario turn left that matches this prompt", 3)


def captured(turn: dict[str, Any], prompt: str) -> dict[str, str]:
    """The named groups of the turn's `capture` regular expression in the prompt (a
    model answers about what it was asked: the card's slug, the owner's words)."""
    # The working tree's folder is named after the card: what a model would see as cwd.
    known = {"worktree": Path.cwd().name}
    pattern = turn.get("capture")
    found = re.search(str(pattern), prompt) if pattern else None
    return known | ({k: v or "" for k, v in found.groupdict().items()} if found else {})


_PLACEHOLDER = re.compile(r"\{\{(\w+)(\|slug)?\}\}")


def slugged(text: str) -> str:
    """A card slug made of `text`: its first words, lower case, joined by dashes."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = ""
    for word in words:
        if len(slug) + len(word) + 1 > 40:
            break
        slug = f"{slug}-{word}" if slug else word
    return slug or "card"


def filled(value: Any, captures: dict[str, str]) -> Any:
    """`{{name}}` (and `{{name|slug}}`) replaced by a capture, in every string of the
    turn, the names of its files too; other placeholders ({{HEAD}}, {{AGAIN}}) stay."""
    if not captures:
        return value
    if isinstance(value, str):

        def one(found: re.Match[str]) -> str:
            name, slug = found.group(1), found.group(2)
            if name not in captures:
                return found.group(0)
            return slugged(captures[name]) if slug else captures[name]

        return _PLACEHOLDER.sub(one, value)
    if isinstance(value, list):
        return [filled(item, captures) for item in value]
    if isinstance(value, dict):
        return {filled(k, captures): filled(v, captures) for k, v in value.items()}
    return value


def log_call(cli: str, record: dict[str, Any]) -> None:
    path = os.environ.get(LOG_ENV)
    if not path:
        return
    entry = {
        "cli": cli,
        "argv": sys.argv[1:],
        "cwd": os.getcwd(),
        "env_keys": sorted(os.environ),
        "pid": os.getpid(),
        "pgid": os.getpgid(0),
        **record,
    }
    with _locked(Path(path)) as handle:
        handle.write(json.dumps(entry) + "\n")
        handle.flush()


def read_stdin() -> str:
    return sys.stdin.read() if not sys.stdin.isatty() else ""


def new_session_id() -> str:
    return str(uuid.uuid4())


def check_env(turn: dict[str, Any]) -> None:
    for key, value in (turn.get("expect_env") or {}).items():
        if os.environ.get(key) != value:
            fail(f"fake cli: environment variable {key} is missing or wrong", 4)
    for key in turn.get("forbid_env") or ():
        if key in os.environ:
            fail(f"fake cli: environment variable {key} must not be set", 4)


def write_files(turn: dict[str, Any]) -> list[str]:
    """Write the turn's files below the cwd; refuse paths that leave it."""
    written = []
    root = Path.cwd().resolve()
    for name, content in (turn.get("files") or {}).items():
        target = (root / name).resolve()
        if root not in target.parents:
            fail(f"fake cli: scenario file {name!r} is outside the working directory", 3)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        written.append(name)
    return written


def prepare_process(turn: dict[str, Any]) -> int | None:
    """Signal handling and helper child as the turn asks; returns the child's pid."""
    if turn.get("ignore_sigterm"):
        # Inherited by the child below: both must be SIGKILLed.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if not turn.get("spawn_child"):
        return None
    child = subprocess.Popen(
        [sys.executable, "-c", "import time\nwhile True: time.sleep(60)"],
        stdin=subprocess.DEVNULL,
        # "detached": the helper leaves the process group (setsid) but keeps stdout.
        start_new_session=turn.get("spawn_child") == "detached",
    )
    return child.pid


def rendezvous(turn: dict[str, Any]) -> None:
    """Let a test see this run start, and make runs meet, without sleeps in the test.

    `touch_file`: append this process's pid as one line to that path, a regular
    file or a named pipe the test reads (so it awaits the start as an event).
    `wait_for_file`: then block until that path exists (two runs that each touch
    one file and wait for the other's can only finish if they run at once).
    """
    touch = turn.get("touch_file")
    if touch:
        with open(touch, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
    wait = turn.get("wait_for_file")
    if wait:
        while not os.path.exists(wait):
            time.sleep(0.01)


def begin_turn(
    cli: str,
    turn: dict[str, Any],
    *,
    writable: bool,
    record: dict[str, Any],
    tools: list[str] | None = None,
) -> tuple[list[str], list[str]]:
    """What both CLIs do before their first line of output: the environment check, the
    child process, the files (written, or denied in a read-only sandbox), the turn's
    `tool_calls` to the MCP server `tools` (runners/scripted/mcp_calls.py), the call's
    log line (`record` plus those), the rendezvous and the scripted hangs.

    Returns (written, denied)."""
    check_env(turn)
    child_pid = prepare_process(turn)
    written = write_files(turn) if writable else []
    denied = sorted(turn.get("files") or {}) if not writable else []
    if turn.get("tool_calls"):
        try:
            turn["_tool_results"] = mcp_calls.call_all(tools, list(turn["tool_calls"]))
        except (OSError, RuntimeError, ValueError) as error:
            log_call(cli, {**record, "tool_error": str(error)})
            fail(f"fake {cli}: a tool call failed: {error}")
        record = {**record, "tool_results": turn["_tool_results"]}
    log_call(cli, {**record, "child_pid": child_pid, "written": written, "denied": denied})
    rendezvous(turn)
    if turn.get("hang") in ("before_output", "trickle"):
        hang(turn)
    if turn.get("no_output"):
        finish(turn)
    return written, denied


def emit(line: str, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    stream.write(line + "\n")
    stream.flush()


def steps(turn: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The turn's `steps` (commands run, files changed, as the CLI reports its work while
    it goes), with `step_delay` seconds before each one."""
    found = turn.get("steps") or []
    delay = float(turn.get("step_delay", 0))
    for step in found:
        if wait := scaled(float(step.get("wait", delay))):
            time.sleep(wait)
        yield step


def hang(turn: dict[str, Any]) -> NoReturn:
    """Never return: silent, or trickling stderr so only the wall clock can stop it."""
    trickle = turn.get("hang") == "trickle"
    while True:
        if trickle:
            emit("working...", sys.stderr)
            time.sleep(0.05)
        else:
            time.sleep(60)


def finish(turn: dict[str, Any]) -> NoReturn:
    if turn.get("stderr"):
        sys.stderr.write(str(turn["stderr"]).rstrip("\n") + "\n")
        sys.stderr.flush()
    if turn.get("hang") == "after_output":
        hang(turn)
    sys.exit(int(turn.get("exit_code", 0)))


def _head() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else "no-git-head"


def answers(turn: dict[str, Any]) -> list[str]:
    """The turn's answer; `{{HEAD}}` becomes the commit checked out in cwd, as a model
    reading the repository would see it (a reviewer quoting the commit it reviewed);
    `{{AGAIN}}` is empty the first time a repeating turn answers and `-2`, `-3`, ...
    after (a demo that drafts again gets a new slug each time)."""
    answer = turn.get("answer", "")
    parts = [answer] if isinstance(answer, str) else [str(part) for part in answer]
    use = int(turn.get("_use", 1))
    parts = [part.replace("{{AGAIN}}", "" if use == 1 else f"-{use}") for part in parts]
    parts = mcp_calls.filled(parts, list(turn.get("_tool_results") or ()))
    if any("{{HEAD}}" in part for part in parts):
        head = _head()
        parts = [part.replace("{{HEAD}}", head) for part in parts]
    return parts
