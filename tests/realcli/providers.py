"""Scripted model providers on 127.0.0.1 for the real agent CLIs.

`ResponsesModel` speaks the OpenAI Responses API as codex uses it (POST
`/v1/responses`, streamed: `response.created`, `response.output_item.done`,
`response.completed` with usage); `MessagesModel` the Anthropic Messages API as
Claude Code uses it (POST `/v1/messages`, streamed: `message_start`,
`content_block_*`, `message_delta`, `message_stop`, tool calls as `tool_use`
blocks). A test scripts what "the model" answers, one turn per request, with the
same steps for both APIs (`Say`, `Shell`, `WriteFile`, `Hang`), and reads back
what each CLI sent: the prompt, the tools it offered, the tool results, the
working directory it announced and the session id in its headers.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import posixpath
import re
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Say:
    """The model answers with this text."""

    text: str


@dataclass(frozen=True)
class Shell:
    """The model runs this command with the CLI's shell tool."""

    command: str


@dataclass(frozen=True)
class WriteFile:
    """The model writes a file (relative to the CLI's working directory) with a tool."""

    path: str
    content: str


@dataclass(frozen=True)
class Hang:
    """The model never answers; the request stays open until the provider stops."""


Step = Say | Shell | WriteFile | Hang


@dataclass
class Seen:
    """One request as the model sees it, the same shape for both APIs."""

    model: str
    prompt: str
    user_texts: list[str]
    assistant_texts: list[str]
    tool_results: list[str]
    tools: set[str]
    cwd: str | None
    session: str | None
    headers: dict[str, str] = field(repr=False)
    body: dict[str, Any] = field(repr=False)


Steps = Step | list[Step]
Turn = Steps | Callable[[Seen], Steps | Awaitable[Steps]]


class ScriptedModel:
    """A loopback model provider answering each agent request with the next scripted turn.

    Turns are used in the order of the requests. Where runs overlap (parallel
    builds) the order is not fixed: set `responder` instead, a function of the
    request (it may be async, to make requests meet) that answers every request
    the queued turns do not. A request with neither is answered with a text saying
    so and noted in `problems`, so the run fails visibly instead of hanging. A
    wrong API key is answered 401 and noted too.
    """

    name = "model"

    def __init__(self, key: str | None = None) -> None:
        self.key = key
        self.turns: deque[Turn] = deque()
        self.responder: Callable[[Seen], Steps | Awaitable[Steps]] | None = None
        self.seen: list[Seen] = []
        self.side_requests: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.usage = {"input": 100, "cached": 20, "output": 10}
        self.hanging = asyncio.Event()
        self._stopping = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    def script(self, *turns: Turn) -> None:
        self.turns.extend(turns)

    @property
    def pending(self) -> int:
        return len(self.turns)

    @property
    def base_url(self) -> str:
        raise NotImplementedError

    async def start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post(self.path, self._handle)
        app.router.add_route("*", "/{tail:.*}", self._unexpected)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _unexpected(self, request: web.Request) -> web.Response:
        self.problems.append(f"unexpected request {request.method} {request.path_qs}")
        return web.json_response({"error": {"message": "not scripted"}}, status=404)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if not self._authorised(request.headers):
            self.problems.append(f"{self.name}: request without the configured key")
            return web.json_response(
                {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}},
                status=401,
            )
        body = await request.json()
        if not self.is_agent_request(body):
            self.side_requests.append(body)
            return await self.side_answer(request, body)
        seen = self.parse(body, dict(request.headers))
        self.seen.append(seen)
        turn = self.turns.popleft() if self.turns else self.responder
        if turn is None:
            self.problems.append(f"{self.name}: no scripted turn left for {seen.prompt[:80]!r}")
            turn = Say("(the script has no turn left)")
        steps = turn(seen) if callable(turn) else turn
        if inspect.isawaitable(steps):
            steps = await steps
        steps = steps if isinstance(steps, list) else [steps]
        if any(isinstance(step, Hang) for step in steps):
            self.hanging.set()
            await self._stopping.wait()
            raise web.HTTPServiceUnavailable()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for event in self.events(steps, seen, len(self.seen)):
            data = json.dumps(event)
            await response.write(f"event: {event['type']}\ndata: {data}\n\n".encode())
        await response.write_eof()
        return response

    # One API's specifics.
    path = "/"

    def _authorised(self, headers: Any) -> bool:
        raise NotImplementedError

    def is_agent_request(self, body: dict[str, Any]) -> bool:
        raise NotImplementedError

    async def side_answer(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        raise NotImplementedError

    def parse(self, body: dict[str, Any], headers: dict[str, str]) -> Seen:
        raise NotImplementedError

    def events(self, steps: list[Step], seen: Seen, number: int) -> list[dict[str, Any]]:
        raise NotImplementedError


def _shell_for_file(path: str, content: str) -> str:
    # base64 keeps any content intact through the shell.
    encoded = base64.b64encode(content.encode()).decode()
    folder = posixpath.dirname(path)
    make = f"mkdir -p {folder} && " if folder else ""
    return f"{make}printf %s {encoded} | base64 -d > {path}"


_CWD_CODEX = re.compile(r"<cwd>(.*?)</cwd>")
_CWD_CLAUDE = re.compile(r"Primary working directory: (\S+)")


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
        return True

    async def side_answer(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        raise AssertionError("codex sends no side requests")

    def parse(self, body: dict[str, Any], headers: dict[str, str]) -> Seen:
        users, assistants, results, cwd = [], [], [], None
        for item in body.get("input", []):
            kind = item.get("type")
            if kind == "message":
                texts = [
                    part.get("text", "")
                    for part in item.get("content", [])
                    if isinstance(part, dict)
                ]
                if item.get("role") == "user":
                    for text in texts:
                        found = _CWD_CODEX.search(text)
                        cwd = found[1] if found else cwd
                        if not text.startswith("<"):
                            users.append(text.strip())
                elif item.get("role") == "assistant":
                    assistants.extend(texts)
            elif kind in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                results.append(output if isinstance(output, str) else json.dumps(output))
        tools = set()
        for tool in body.get("tools", []):
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

    def _shell_item(self, command: str, seen: Seen, number: int, index: int) -> dict[str, Any]:
        if "exec_command" in seen.tools:
            name, arguments = "exec_command", {"cmd": command}
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

    def events(self, steps: list[Step], seen: Seen, number: int) -> list[dict[str, Any]]:
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
            else:
                assert isinstance(step, WriteFile)
                command = _shell_for_file(step.path, step.content)
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
                    elif not text.startswith("<system-reminder>"):
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
        if isinstance(step, Shell):
            return "Bash", {"command": step.command, "description": "run a command"}
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
