"""The OpenAI Responses API (streamed server-sent events), as codex's custom model
providers use it: POST /v1/responses; `response.created`, one
`response.output_item.done` per message or function call, `response.completed`
with usage."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.realcli.providers import (
    Call,
    Look,
    Say,
    ScriptedModel,
    Seen,
    Shell,
    Step,
    WriteFile,
    shell_for_file,
)


@dataclass(frozen=True)
class Patch:
    """The model adds a file with codex's `apply_patch` tool (codex only): a path outside
    the workspace makes codex ask for the file change under `on-request`."""

    path: str
    content: str


_CWD_CODEX = re.compile(r"<cwd>(.*?)</cwd>")
# How codex 0.171's TUI begins its request for a thread's title.
TITLE_REQUEST = "Generate a concise, single-line task title"


@dataclass(frozen=True)
class Escalate:
    """The model runs this command outside codex's sandbox: its shell tool's
    `sandbox_permissions: "require_escalated"` with a justification (codex only), which
    the approval policy `on-request` puts before the user."""

    command: str
    justification: str = "This needs to run outside the sandbox."


class ResponsesModel(ScriptedModel):
    """The OpenAI Responses API (streamed), as codex's custom model providers use it."""

    name = "responses"
    path = "/v1/responses"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _authorised(self, headers: Any) -> bool:
        return self.key is None or headers.get("Authorization") == f"Bearer {self.key}"

    def is_agent_request(self, body: dict[str, Any]) -> bool:
        # The interactive codex (a session handed over to a terminal) asks, beside the
        # turn and when it likes, for a title for the thread: not a turn of the script.
        return not any(
            text.startswith(TITLE_REQUEST)
            for item in body.get("input", [])
            if isinstance(item, dict) and item.get("role") == "user"
            for part in item.get("content", [])
            if isinstance(part, dict) and isinstance(text := part.get("text"), str)
        )

    async def side_answer(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        seen = self.parse(body, dict(request.headers))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for event in self.events([Say("Scripted task")], seen, len(self.seen) + 1):
            await response.write(self.frame(event))
        await response.write_eof()
        return response

    def parse(self, body: dict[str, Any], headers: dict[str, str]) -> Seen:
        users, assistants, results, cwd = [], [], [], None
        found_tools: list[dict[str, Any]] = []
        for item in body.get("input", []):
            kind = item.get("type")
            if kind == "message":
                # Text parts only: a picture (`input_image`) says nothing.
                texts = [
                    part["text"]
                    for part in item.get("content", [])
                    if isinstance(part, dict) and isinstance(part.get("text"), str)
                ]
                if item.get("role") == "user":
                    for text in texts:
                        found = _CWD_CODEX.search(text)
                        cwd = found[1] if found else cwd
                        if not text.startswith("<"):
                            users.append(text.strip())
                elif item.get("role") == "assistant":
                    assistants.extend(texts)
            elif kind == "tool_search_output":
                found_tools.extend(item.get("tools") or [])
            elif kind in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                results.append(output if isinstance(output, str) else json.dumps(output))
        tools = set()
        for tool in [*body.get("tools", []), *found_tools]:
            tools.add(tool.get("name") or tool.get("type"))
            tools.update(t.get("name") for t in tool.get("tools", []) if isinstance(t, dict))
        return Seen(
            model=body.get("model", ""),
            prompt=users[-1] if users else "",
            user_texts=users,
            assistant_texts=assistants,
            tool_results=results,
            tools=tools,
            cwd=cwd,
            session=headers.get("session-id"),
            headers=headers,
            body=body,
        )

    def _shell_item(
        self, command: str, seen: Seen, number: int, index: int, **extra: Any
    ) -> dict[str, Any]:
        if "exec_command" in seen.tools:
            name, arguments = "exec_command", {"cmd": command, **extra}
        elif "shell" in seen.tools:
            name, arguments = "shell", {"command": ["bash", "-lc", command]}
        else:
            self.problems.append(f"codex offered no shell tool: {sorted(seen.tools)}")
            name, arguments = "exec_command", {"cmd": command}
        return {
            "type": "function_call",
            "id": f"fc_{number}_{index}",
            "call_id": f"call_{number}_{index}",
            "name": name,
            "arguments": json.dumps(arguments),
        }

    def _call_item(self, step: Call, seen: Seen, number: int, index: int) -> dict[str, Any]:
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{number}_{index}",
            "call_id": f"call_{number}_{index}",
            "name": step.name_in(seen.tools, self.problems),
            "arguments": json.dumps(step.arguments),
        }
        namespace = self.namespaces(seen).get(item["name"])
        if namespace is not None:
            item["namespace"] = namespace
        return item

    @staticmethod
    def offered(step: Call, seen: Seen) -> bool:
        return any(name and name.endswith(step.tool) for name in seen.tools)

    @staticmethod
    def namespaces(seen: Seen) -> dict[str, str]:
        """The namespace each namespaced tool was offered in (codex's MCP tools)."""
        found = {}
        searched = [
            tool
            for item in seen.body.get("input", [])
            if item.get("type") == "tool_search_output"
            for tool in item.get("tools") or []
        ]
        for tool in [*seen.body.get("tools", []), *searched]:
            for inner in tool.get("tools", []) if isinstance(tool, dict) else []:
                if isinstance(inner, dict) and tool.get("name"):
                    found[inner.get("name")] = tool["name"]
        return found

    def events(
        self, steps: list[Step | Escalate | Patch], seen: Seen, number: int
    ) -> list[dict[str, Any]]:
        response_id = f"resp_{number}"
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {"id": response_id}}
        ]
        for index, step in enumerate(steps):
            if isinstance(step, Say):
                item = {
                    "type": "message",
                    "role": "assistant",
                    "id": f"msg_{number}_{index}",
                    "content": [{"type": "output_text", "text": step.text}],
                }
            elif isinstance(step, Shell):
                item = self._shell_item(step.command, seen, number, index)
            elif isinstance(step, Escalate):
                item = self._shell_item(
                    step.command,
                    seen,
                    number,
                    index,
                    sandbox_permissions="require_escalated",
                    justification=step.justification,
                )
            elif isinstance(step, Patch):
                lines = "".join(f"+{line}\n" for line in step.content.splitlines())
                item = {
                    "type": "custom_tool_call",
                    "id": f"ctc_{number}_{index}",
                    "call_id": f"call_{number}_{index}",
                    "name": "apply_patch",
                    "input": f"*** Begin Patch\n*** Add File: {step.path}\n{lines}*** End Patch\n",
                }
            elif isinstance(step, Call) and not self.offered(step, seen):
                # Codex offers MCP tools only through its tool search (deferred): the
                # model searches first, codex answers with the tools, then it calls.
                item = {
                    "type": "tool_search_call",
                    "id": f"ts_{number}_{index}",
                    "call_id": f"call_{number}_{index}",
                    "execution": "client",
                    "arguments": {"query": step.tool.replace("_", " "), "limit": 8},
                    "status": "completed",
                }
                self.turns.appendleft([step])
            elif isinstance(step, Call):
                item = self._call_item(step, seen, number, index)
            elif isinstance(step, Look):
                item = self._shell_item(f"ls {step.path}", seen, number, index)
            else:
                assert isinstance(step, WriteFile)
                command = shell_for_file(step.path, step.content)
                item = self._shell_item(command, seen, number, index)
            events.append(
                {"type": "response.output_item.done", "output_index": index, "item": item}
            )
        usage = self.usage
        events.append(
            {
                "type": "response.completed",
                "response": {
                    "id": response_id,
                    "usage": {
                        "input_tokens": usage["input"],
                        "input_tokens_details": {"cached_tokens": usage["cached"]},
                        "output_tokens": usage["output"],
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": usage["input"] + usage["output"],
                    },
                },
            }
        )
        return events
