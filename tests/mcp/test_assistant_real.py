"""`chatbot mcp` as the real Claude Code uses it: `claude -p` with the server in its
--mcp-config, against a scripted model on 127.0.0.1 (tests/realcli) that calls the
board's tools; what the tools answered comes back in Claude Code's next request."""

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
