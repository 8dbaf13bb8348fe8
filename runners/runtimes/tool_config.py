"""How each agent CLI is told about the run's tool server (`runners.tool_server`).

Each runtime's argv builder adds its part; the facts are measured on the pinned versions
(docs/agent-tools.md, "What each CLI does"):

- codex: `-c mcp_servers.board.command=...`, `args`, `tool_timeout_sec` (its default is
  60 s, shorter than an owner takes to answer) and `startup_timeout_sec`; the same
  overrides for `exec` and `app-server`. Its tools are `board` / `ask_owner` in its events.
- Claude Code: `--mcp-config <json>` with `--strict-mcp-config` (no other server of the
  user's or the project's is loaded), each tool granted in `--allowedTools` as
  `mcp__board__<tool>` (else a headless run refuses it), `MCP_TOOL_TIMEOUT` (ms) in its
  environment.
- Gemini CLI: `mcpServers.board` with `timeout` (ms) and `trust: true` (not asked for
  approval) in a settings file of the run's own, named by `GEMINI_CLI_SYSTEM_SETTINGS_PATH`
  (the shared home's settings file stays the same for every run).
"""

from __future__ import annotations

import json
from pathlib import Path

from runners.tool_server import SERVER_NAME, ToolServer

#: How long a CLI waits for the server to start; the pump starts within milliseconds.
STARTUP_TIMEOUT_S = 30
CLAUDE_TIMEOUT_ENV = "MCP_TOOL_TIMEOUT"
GEMINI_SETTINGS_ENV = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
GEMINI_SETTINGS_FILE = "gemini-settings.json"


def codex_options(tools: ToolServer | None) -> list[str]:
    """`-c` overrides (TOML values written as JSON of validated paths and words)."""
    if tools is None:
        return []
    key = f"mcp_servers.{SERVER_NAME}"
    return [
        "-c",
        f"{key}.command={json.dumps(tools.command())}",
        "-c",
        f"{key}.args={json.dumps(tools.args())}",
        "-c",
        f"{key}.startup_timeout_sec={STARTUP_TIMEOUT_S}",
        "-c",
        f"{key}.tool_timeout_sec={tools.timeout_s:g}",
    ]


def claude_rules(tools: ToolServer | None) -> list[str]:
    """The tools as Claude Code's allowed-tool rules."""
    if tools is None:
        return []
    return [f"mcp__{SERVER_NAME}__{name}" for name in tools.tools]


def claude_options(tools: ToolServer | None) -> list[str]:
    if tools is None:
        return []
    config = {"mcpServers": {SERVER_NAME: {"command": tools.command(), "args": tools.args()}}}
    return ["--mcp-config", json.dumps(config), "--strict-mcp-config"]


def claude_env(tools: ToolServer | None) -> dict[str, str]:
    if tools is None:
        return {}
    return {CLAUDE_TIMEOUT_ENV: str(int(tools.timeout_s * 1000))}


def gemini_settings(tools: ToolServer | None) -> tuple[dict[str, str], dict[Path, str]]:
    """(environment, files) that give a Gemini CLI run the server."""
    if tools is None:
        return {}, {}
    server = {
        "command": tools.command(),
        "args": tools.args(),
        "timeout": int(tools.timeout_s * 1000),
        "trust": True,
    }
    path = tools.folder / GEMINI_SETTINGS_FILE
    text = json.dumps({"mcpServers": {SERVER_NAME: server}}, indent=2) + "\n"
    return {GEMINI_SETTINGS_ENV: str(path)}, {path: text}
