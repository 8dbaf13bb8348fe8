"""The Anthropic Messages API (streamed server-sent events), as Claude Code uses it:
POST /v1/messages; `message_start`, `content_block_start/delta/stop` per text or
`tool_use` block, `message_delta` with the stop reason and usage, `message_stop`."""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web

from tests.realcli.providers import Call, Look, Say, ScriptedModel, Seen, Shell, Step, WriteFile

_CWD_CLAUDE = re.compile(r"Primary working directory: (\S+)")
# Text blocks Claude Code adds to a user message itself: its reminders, and after a
# picture where it keeps a copy ("[Image: source: /tmp/claude-0/...]").
_CLI_NOTES = ("<system-reminder>", "[Image: source: ")


class MessagesModel(ScriptedModel):
    """The Anthropic Messages API (streamed), as Claude Code uses it."""

    name = "messages"
    path = "/v1/messages"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _authorised(self, headers: Any) -> bool:
        return self.key is None or headers.get("x-api-key") == self.key

    def is_agent_request(self, body: dict[str, Any]) -> bool:
        # Claude Code's own small requests (titles, summaries) offer no tools.
        return bool(body.get("tools")) and bool(body.get("stream"))

    async def side_answer(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        return web.json_response(
            {
                "id": "msg_side",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", ""),
                "content": [{"type": "text", "text": "ok"}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        )

    def parse(self, body: dict[str, Any], headers: dict[str, str]) -> Seen:
        users, assistants, results, cwd = [], [], [], None
        for message in body.get("messages", []):
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks or []:
                kind = block.get("type")
                if kind == "text":
                    text = block.get("text", "")
                    found = _CWD_CLAUDE.search(text)
                    cwd = found[1] if found else cwd
                    if message.get("role") == "assistant":
                        assistants.append(text)
                    elif not text.startswith(_CLI_NOTES):
                        users.append(text.strip())
                elif kind == "tool_result":
                    inner = block.get("content")
                    if isinstance(inner, list):
                        inner = "\n".join(part.get("text", "") for part in inner)
                    results.append(inner or "")
        return Seen(
            model=body.get("model", ""),
            prompt=users[-1] if users else "",
            user_texts=users,
            assistant_texts=assistants,
            tool_results=results,
            tools={tool.get("name") for tool in body.get("tools", [])},
            cwd=cwd,
            session=headers.get("X-Claude-Code-Session-Id"),
            headers=headers,
            body=body,
        )

    def _tool_use(self, step: Step, seen: Seen) -> tuple[str, dict[str, Any]]:
        if isinstance(step, Call):
            return step.name_in(seen.tools, self.problems), step.arguments
        if isinstance(step, Shell):
            return "Bash", {"command": step.command, "description": "run a command"}
        if isinstance(step, Look):
            return "Bash", {"command": f"ls {step.path}", "description": "list a folder"}
        assert isinstance(step, WriteFile)
        if seen.cwd is None:
            self.problems.append("claude announced no working directory")
        return "Write", {"file_path": f"{seen.cwd}/{step.path}", "content": step.content}

    def events(self, steps: list[Step], seen: Seen, number: int) -> list[dict[str, Any]]:
        usage = self.usage
        events: list[dict[str, Any]] = [
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{number}",
                    "type": "message",
                    "role": "assistant",
                    "model": seen.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": usage["input"] - usage["cached"],
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": usage["cached"],
                        "output_tokens": 1,
                    },
                },
            }
        ]
        stop = "end_turn"
        for index, step in enumerate(steps):
            if isinstance(step, Say):
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": step.text}
            else:
                name, arguments = self._tool_use(step, seen)
                start = {"type": "tool_use", "id": f"toolu_{number}_{index}", "name": name}
                start["input"] = {}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
                stop = "tool_use"
            events += [
                {"type": "content_block_start", "index": index, "content_block": start},
                {"type": "content_block_delta", "index": index, "delta": delta},
                {"type": "content_block_stop", "index": index},
            ]
        events += [
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output"]},
            },
            {"type": "message_stop"},
        ]
        return events
