"""`chatbot mcp` as the real Claude Code and codex use it: `claude -p` with the server in
its --mcp-config, `codex exec` with it as `mcp_servers.board`, each against a scripted
model on 127.0.0.1 (tests/realcli) that calls the board's tools; what the tools
answered comes back in the CLI's next request."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.test_chatbot_mcp import OWNER, board_state, fail_alpha
from tests.mcp.test_chatbot_mcp import config as config  # noqa: F401 - the fixture
from tests.realcli import install
from tests.realcli.anthropic_messages import MessagesModel
from tests.realcli.clis.claude import CLI as CLAUDE
from tests.realcli.clis.codex import CLI as CODEX
from tests.realcli.openai_responses import ResponsesModel
from tests.realcli.providers import Say, Seen, Step


@dataclass(frozen=True)
class CallTool:
    """The model calls a tool of an MCP server by the name Claude Code gives it
    (mcp__<server>__<tool>; it offers them to the model on demand, through its ToolSearch)."""

    name: str
    arguments: dict[str, Any]


class AssistantModel(MessagesModel):
    def _tool_use(self, step: Step, seen: Seen) -> tuple[str, dict[str, Any]]:
        if isinstance(step, CallTool):
            return step.name, step.arguments
        return super()._tool_use(step, seen)


def answer(tool_result: str) -> Any:
    """The tool's JSON, as Claude Code passed it on (it may append its own reminders)."""
    found, _ = json.JSONDecoder().raw_decode(tool_result)
    return found


@pytest.fixture
async def model() -> Any:
    started = AssistantModel(CLAUDE.key)
    await started.start()
    yield started
    await started.stop()
    assert not started.problems, started.problems


async def ask_claude(model: AssistantModel, config: Path, *extra: str) -> dict[str, Any]:
    binary = install.binary("claude")
    assert binary.exists(), "the real agent CLIs are not installed: scripts/test installs them"
    home = config.parent / "home"
    home.mkdir(exist_ok=True)
    board = {"command": sys.executable, "args": ["-m", "chatbot", "mcp", "--config", str(config)]}
    board["args"] += list(extra)
    process = await asyncio.create_subprocess_exec(
        str(binary),
        "-p",
        "--output-format",
        "json",
        "--model",
        CLAUDE.models[0],
        "--setting-sources",
        "",
        "--strict-mcp-config",
        "--mcp-config",
        json.dumps({"mcpServers": {"board": board}}),
        "--permission-mode",
        "dontAsk",
        "--allowedTools",
        "mcp__board__inbox mcp__board__why mcp__board__start_card mcp__board__draft_card",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=config.parent,
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": CLAUDE.key,
            **CLAUDE.env,
        },
    )
    out, err = await asyncio.wait_for(process.communicate(b"What waits for me?"), 180)
    assert process.returncode == 0, err.decode()[-2000:]
    return json.loads(out)


async def test_claude_code_reads_the_inbox_and_why(model: AssistantModel, config: Path) -> None:
    await fail_alpha(config)
    model.script(
        CallTool("mcp__board__inbox", {}),
        CallTool("mcp__board__why", {"slug": "alpha"}),
        lambda seen: Say("alpha failed: " + answer(seen.tool_results[-1])["text"]),
    )
    result = await ask_claude(model, config)
    inbox = answer(model.seen[1].tool_results[-1])
    assert [(i["kind"], i["card"]) for i in inbox["items"]] == [("failed", "alpha")]
    why = answer(model.seen[2].tool_results[-1])
    assert why["ways"] == ["/retry alpha", "/fix alpha"]
    assert result["result"].startswith("alpha failed: alpha ")


async def test_claude_code_starts_a_card_as_the_owner(model: AssistantModel, config: Path) -> None:
    before = await board_state(config)
    model.script(
        CallTool("mcp__board__start_card", {"slug": "beta"}),
        CallTool("mcp__board__draft_card", {"text": "x" * 100_000}),
        Say("started"),
    )
    await ask_claude(model, config)  # without --as
    refused = model.seen[1].tool_results[-1]
    assert "--as" in refused and "Nothing was changed" in refused
    assert "4000" in model.seen[2].tool_results[-1]
    assert await board_state(config) == before

    model.script(CallTool("mcp__board__start_card", {"slug": "beta"}), Say("started"))
    await ask_claude(model, config, "--as", OWNER)
    done = answer(model.seen[-1].tool_results[-1])
    assert done["done"] and "beta: /start" in done["said"]
    started = dict((slug, phase) for slug, phase, _ in await board_state(config))
    assert started["beta"] == "operator_running"


@dataclass(frozen=True)
class Search:
    """The model asks codex's tool_search for tools: codex offers an MCP server's tools
    only so (its `tool_search_always_defer_mcp_tools`), as a namespace `mcp__<server>`."""

    query: str


class CodexAssistantModel(ResponsesModel):
    def events(self, steps: list[Any], seen: Seen, number: int) -> list[dict[str, Any]]:
        if not any(isinstance(step, Search | CallTool) for step in steps):
            return super().events(steps, seen, number)
        (step,) = steps
        if isinstance(step, Search):
            item: dict[str, Any] = {
                "type": "tool_search_call",
                "call_id": f"search_{number}",
                "execution": "client",
                "status": "completed",
                "arguments": {"query": step.query, "limit": 20},
            }
        else:
            item = {
                "type": "function_call",
                "call_id": f"call_{number}",
                "namespace": "mcp__board",
                "name": step.name,
                "arguments": json.dumps(step.arguments),
            }
        item["id"] = f"item_{number}"
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 11,
        }
        return [
            {"type": "response.created", "response": {"id": f"resp_{number}"}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": f"resp_{number}", "usage": usage}},
        ]


def board_tools_found(seen: Seen) -> list[str]:
    """The board's tools codex's last tool_search gave the model (none while the server
    still starts: codex asks the model before its MCP servers are up)."""
    found = [
        item for item in seen.body.get("input", []) if item.get("type") == "tool_search_output"
    ]
    spaces = found[-1].get("tools", []) if found else []
    return [
        t["name"] for space in spaces if space.get("name") == "mcp__board" for t in space["tools"]
    ]


def codex_answer(tool_result: str) -> Any:
    """The tool's JSON from codex's function_call_output parts."""
    parts = json.loads(tool_result)
    return answer(next(part["text"] for part in parts if part["text"].startswith("{")))


async def ask_codex(model: CodexAssistantModel, config: Path, *extra: str) -> None:
    binary = install.binary("codex")
    assert binary.exists(), "the real agent CLIs are not installed: scripts/test installs them"
    home = config.parent / "codex-home"
    home.mkdir(exist_ok=True)
    args = ["-m", "chatbot", "mcp", "--config", str(config), *extra]
    overrides = {
        "model_provider": "loopback",
        "model_providers.loopback.name": "loopback",
        "model_providers.loopback.base_url": model.base_url,
        "model_providers.loopback.env_key": "LOOPBACK_KEY",
        "model_providers.loopback.wire_api": "responses",
        "mcp_servers.board.command": sys.executable,
        "mcp_servers.board.args": args,
    }
    options = [
        part for key, value in overrides.items() for part in ("-c", f"{key}={json.dumps(value)}")
    ]
    process = await asyncio.create_subprocess_exec(
        str(binary),
        *options,
        "-m",
        CODEX.models[0],
        "exec",
        "--ignore-user-config",
        "--skip-git-repo-check",
        "--json",
        "What waits for me?",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=config.parent,
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(config.parent / "home"),
            "CODEX_HOME": str(home),
            "LOOPBACK_KEY": CODEX.key,
        },
    )
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode == 0, (out.decode()[-2000:], err.decode()[-2000:])


@pytest.fixture
async def codex_model() -> Any:
    started = CodexAssistantModel(CODEX.key)
    await started.start()
    yield started
    await started.stop()
    assert not started.problems, started.problems


async def test_codex_reads_the_inbox_and_starts_a_card_as_the_owner(
    codex_model: CodexAssistantModel, config: Path
) -> None:
    await fail_alpha(config)
    searches = 0
    then: list[Any] = [
        CallTool("inbox", {}),
        CallTool("start_card", {"slug": "beta"}),
        CallTool("get_card", {"slug": "beta"}),
        Say("done"),
    ]

    def model_turn(seen: Seen) -> Any:
        # Until the server is up, each search is answered at once and asked again at once
        # (no clock in between); then the calls, one a turn.
        nonlocal searches
        if "start_card" not in board_tools_found(seen) and len(then) == 4:
            searches += 1
            assert searches < 1000, "codex never found the board's tools"
            return Search("board inbox start card")
        return then.pop(0)

    codex_model.responder = model_turn
    await ask_codex(codex_model, config, "--as", OWNER)
    calls = [seen for seen in codex_model.seen if seen.tool_results]
    results = [seen.tool_results[-1] for seen in calls]
    inbox = codex_answer(results[-3])
    assert [(i["kind"], i["card"]) for i in inbox["items"]] == [("failed", "alpha")]
    started = codex_answer(results[-2])
    assert started["done"] and "beta: /start" in started["said"]
    history = codex_answer(results[-1])["events"]
    assert (history[-1]["action"], history[-1]["actor"]) == ("start", f"xmpp:{OWNER} via mcp")
    phases = {slug: phase for slug, phase, _ in await board_state(config)}
    assert phases["beta"] == "operator_running"
    print(f"codex searched {searches} times before the board's tools were there")
