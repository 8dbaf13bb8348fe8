"""The bot's MCP server for one run, as the agent CLI is told to reach it.

The bot serves the tools (`chatbot.pipeline.run_tools`) on a Unix socket in a folder of
its own made for the run (`make_folder`: readable by the bot's user only, removed with
the run). Each CLI is configured by its runtime adapter to start `argv()` as a stdio MCP
server named `SERVER_NAME`: the pump `runners.mcp_bridge`, copied into the folder, which
joins the CLI's pipes to the socket. The sandbox shows the folder (read-only) at the same
path and the interpreter; without a sandbox the same path works as it is.

`timeout_s` is how long one tool call may take (an owner's answer: `[bot] ask_timeout_s`
and a margin); each CLI gets it in its own setting, so the CLI does not give up first.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: The server's name in every CLI's configuration; a tool is `mcp__board__ask_owner` to
#: Claude Code, `board.ask_owner` to codex's events.
SERVER_NAME = "board"
SOCKET_FILE = "board.sock"
BRIDGE_FILE = "bridge.py"
#: A tool's name: what reaches argv (codex `-c`, claude's allowed tools) must be a word.
TOOL_NAME_RE = re.compile(r"^[a-z][a-z_]{0,40}$")
# A folder that reaches a TOML string, a JSON file and argv: no quote, no control.
_FOLDER_RE = re.compile(r"^/[A-Za-z0-9._/+-]+$")
#: Longest path of a Unix socket (sun_path is 108 bytes with its NUL).
MAX_SOCKET_PATH = 107


class ToolServerError(ValueError):
    """The run's tool server cannot be described to a CLI (a bad name or folder)."""


@dataclass(frozen=True, slots=True)
class ToolServer:
    folder: Path
    #: The tools this run may call without being asked (the run's role decides).
    tools: tuple[str, ...]
    timeout_s: float

    @property
    def socket(self) -> Path:
        return self.folder / SOCKET_FILE

    @property
    def bridge(self) -> Path:
        return self.folder / BRIDGE_FILE

    def command(self) -> str:
        return python()

    def args(self) -> list[str]:
        return ["-I", "-S", str(self.bridge), str(self.socket)]

    def argv(self) -> list[str]:
        return [self.command(), *self.args()]

    def validate(self) -> None:
        """Refuse what must not reach a CLI's configuration."""
        if not self.folder.is_absolute() or not _FOLDER_RE.fullmatch(str(self.folder)):
            raise ToolServerError(f"the tool folder {str(self.folder)[:80]!r} is no plain path")
        if len(str(self.socket).encode()) > MAX_SOCKET_PATH:
            raise ToolServerError(f"the tool socket's path is longer than {MAX_SOCKET_PATH}")
        if not self.tools or not all(TOOL_NAME_RE.fullmatch(name) for name in self.tools):
            raise ToolServerError("a run's tools must be named by words")
        if not 0 < self.timeout_s <= 7 * 24 * 3600:
            raise ToolServerError("a tool call's timeout must be positive")


@cache
def python() -> str:
    """The interpreter that runs the pump: this one, by its real path (shown in the sandbox
    with `runners.sandbox.python_paths`)."""
    return os.path.realpath(sys.executable)


@cache
def bridge_source() -> str:
    from runners import mcp_bridge

    return Path(mcp_bridge.__file__).read_text(encoding="utf-8")


def make_folder() -> Path:
    """A new folder for one run's socket and pump, only the bot's user may open it."""
    base = tempfile.gettempdir()
    if len(os.path.join(base, "ib-tools-XXXXXXXX", SOCKET_FILE).encode()) > MAX_SOCKET_PATH:
        base = "/tmp"  # a long TMPDIR would make the socket's path too long to bind
    folder = Path(tempfile.mkdtemp(prefix="ib-tools-", dir=base))  # mode 0o700
    bridge = folder / BRIDGE_FILE
    bridge.write_text(bridge_source(), encoding="utf-8")
    bridge.chmod(0o400)
    return folder


def remove_folder(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
