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
  approval) in the settings file of its home, the same for every run, the run's socket
  from `INTENT_BOARD_TOOLS_SOCKET` in its environment (`gemini_servers`).
"""

from __future__ import annotations

import json

from runners.tool_server import SERVER_NAME, ToolServer, bridge_source, python

#: How long a CLI waits for the server to start; the pump starts within milliseconds.
STARTUP_TIMEOUT_S = 30
CLAUDE_TIMEOUT_ENV = "MCP_TOOL_TIMEOUT"
CLAUDE_SEARCH_ENV = "ENABLE_TOOL_SEARCH"
GEMINI_SOCKET_ENV = "INTENT_BOARD_TOOLS_SOCKET"
#: Seven days (the longest `[bot] ask_timeout_s`) and a minute, in milliseconds.
GEMINI_CALL_TIMEOUT_MS = (7 * 24 * 3600 + 60) * 1000


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
        "-c",
        f'{key}.default_tools_approval_mode="approve"',
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
    # Without it the tools are deferred behind its ToolSearch (measured: the model is
    # offered `ToolSearch` and `DeferredToolPlaceholder`, not the tools).
    return {CLAUDE_TIMEOUT_ENV: str(int(tools.timeout_s * 1000)), CLAUDE_SEARCH_ENV: "false"}


def gemini_servers() -> dict[str, object]:
    """The server in the settings every Gemini CLI run of a home shares: the same text
    for every run (runs share the file), the run's own socket from its environment.

    A settings file of the run's own is not taken: the CLI reads its system settings
    only from a root-owned path (measured: "Skipping system settings file ... Parent
    directory '/tmp' is insecure"). Settings strings expand `${VAR:-default}`; a run
    without tools has no socket, its pump says so and exits, and the run goes on
    without the server. The CLI's own limit per call is the longest wait the
    configuration allows, plus a margin: the bot ends the wait itself."""
    server: dict[str, object] = {
        "command": python(),
        "args": ["-I", "-S", "-c", bridge_source(), f"${{{GEMINI_SOCKET_ENV}:-}}"],
        "timeout": GEMINI_CALL_TIMEOUT_MS,
        "trust": True,
    }
    return {SERVER_NAME: server}


def gemini_env(tools: ToolServer | None) -> dict[str, str]:
    if tools is None:
        return {}
    return {GEMINI_SOCKET_ENV: str(tools.socket)}
