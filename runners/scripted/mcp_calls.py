"""The stand-ins' MCP client (stdlib only): a turn's `tool_calls` go to the server the
command line names, as the real CLIs do with the bot's tools (runners/tool_server.py).

    "tool_calls": [{"tool": "ask_owner", "arguments": {"question": "...", "options": [...]}}]

Each call's text result is kept in order; `{{TOOL_RESULT}}` in the turn's answer is the
last one, `{{TOOL_RESULT_1}}` ... each one; an error result is written `error: <text>`.
The server is the one the command line configures: codex `-c mcp_servers.board.command`
and `args`, claude `--mcp-config` (its `mcpServers.board`). A turn with calls and no
server fails the run, as a model calling a tool it was not offered would.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

SERVER = "board"
PROTOCOL = "2025-06-18"


def server_of_codex(config: dict[str, Any]) -> list[str] | None:
    command = config.get(f"mcp_servers.{SERVER}.command")
    args = config.get(f"mcp_servers.{SERVER}.args") or []
    return [str(command), *map(str, args)] if command else None


def server_of_claude(mcp_config: str | None) -> list[str] | None:
    if not mcp_config:
        return None
    server = json.loads(mcp_config).get("mcpServers", {}).get(SERVER)
    if not server:
        return None
    return [str(server["command"]), *map(str, server.get("args", []))]


def call_all(argv: list[str] | None, calls: list[dict[str, Any]]) -> list[str]:
    """Start the server, speak MCP over its stdio, make each call; the texts."""
    if argv is None:
        raise RuntimeError("the turn calls tools, but no MCP server was configured")
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    ids = iter(range(1, 1000))

    def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        number = next(ids)
        message = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        stdin.write(json.dumps(message) + "\n")
        stdin.flush()
        while line := stdout.readline():
            answer = json.loads(line)
            if answer.get("id") == number:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer["result"]
                return result
        raise RuntimeError(f"the MCP server ended during {method}")

    try:
        request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "scripted-stand-in", "version": "1"},
            },
        )
        process.stdin.write(
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
        )
        process.stdin.flush()
        results = []
        for call in calls:
            result = request(
                "tools/call", {"name": call["tool"], "arguments": call.get("arguments", {})}
            )
            text = "\n".join(
                part.get("text", "") for part in result.get("content", []) if isinstance(part, dict)
            )
            results.append(f"error: {text}" if result.get("isError") else text)
        return results
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()


def filled(parts: list[str], results: list[str]) -> list[str]:
    """The answer's `{{TOOL_RESULT}}` and `{{TOOL_RESULT_n}}` replaced by the results."""
    out = []
    for part in parts:
        for number, text in enumerate(results, start=1):
            part = part.replace(f"{{{{TOOL_RESULT_{number}}}}}", text)
        if results:
            part = part.replace("{{TOOL_RESULT}}", results[-1])
        out.append(part)
    return out
