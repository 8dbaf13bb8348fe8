"""Scripted model providers on 127.0.0.1 for the real agent CLIs: the shared part.

`ResponsesModel` (openai_responses.py) speaks the OpenAI Responses API as codex
uses it, `MessagesModel` (anthropic_messages.py) the Anthropic Messages API as
Claude Code uses it, `GeminiModel` (gemini_api.py) the Gemini API as Gemini CLI
uses it. A test scripts what "the model" answers, one turn per request, with the
same steps for every API (`Say`, `Shell`, `WriteFile`, `Look`, `Hang`),
and reads back what each CLI sent: the prompt, the tools it offered, the tool
results, the working directory it announced and the session id in its headers.

`TestedCli` is what the tests know of one CLI besides its runtime's record: which of
these providers it talks to and what it says where CLIs differ (tests/realcli/clis/).
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import posixpath
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
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
class Look:
    """The model lists a folder (relative to the CLI's working directory) the CLI's own
    way: with its listing tool where a read-only run has no shell, else with `ls`."""

    path: str = "."


@dataclass(frozen=True)
class Hang:
    """The model never answers; the request stays open until the provider stops."""


@dataclass(frozen=True)
class Refuse:
    """The provider refuses the request as the real APIs do when a quota or rate limit is
    spent: this HTTP status, headers (`retry-after`...) and JSON body, nothing streamed."""

    body: dict[str, Any]
    status: int = 429
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Call:
    """The model calls a tool the CLI offered it, by the end of its name (an MCP tool's
    name is the CLI's own: `mcp__board__ask_owner`), with these arguments."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def name_in(self, offered: set[str], problems: list[str]) -> str:
        found = sorted(name for name in offered if name and name.endswith(self.tool))
        if len(found) != 1:
            problems.append(f"no single offered tool ends with {self.tool!r}: {sorted(offered)}")
            return self.tool
        return found[0]


Step = Say | Shell | WriteFile | Look | Hang | Refuse | Call


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
        #: How many requests a `Refuse` step answered (the CLI's own retries count too).
        self.refused = 0
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
        # The Gemini API names the model in the path, not in the body.
        seen.model = seen.model or request.match_info.get("model", "")
        self.seen.append(seen)
        turn = self.turns.popleft() if self.turns else self.responder
        if turn is None:
            self.problems.append(f"{self.name}: no scripted turn left for {seen.prompt[:80]!r}")
            turn = Say("(the script has no turn left)")
        steps = turn(seen) if callable(turn) else turn
        if inspect.isawaitable(steps):
            steps = await steps
        steps = steps if isinstance(steps, list) else [steps]
        refused = [step for step in steps if isinstance(step, Refuse)]
        if refused:
            self.refused += 1
            return web.json_response(
                refused[0].body, status=refused[0].status, headers=dict(refused[0].headers)
            )
        if any(isinstance(step, Hang) for step in steps):
            self.hanging.set()
            await self._stopping.wait()
            raise web.HTTPServiceUnavailable()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for event in self.events(steps, seen, len(self.seen)):
            await response.write(self.frame(event))
        await response.write_eof()
        return response

    def frame(self, event: dict[str, Any]) -> bytes:
        """One server-sent event; an API without event names overrides this."""
        return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()

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


def shell_for_file(path: str, content: str) -> str:
    # base64 keeps any content intact through the shell.
    encoded = base64.b64encode(content.encode()).decode()
    folder = posixpath.dirname(path)
    make = f"mkdir -p {folder} && " if folder else ""
    return f"{make}printf %s {encoded} | base64 -d > {path}"


def wire_sessions(model: ScriptedModel, home: Path) -> set[str | None]:
    """The session ids a CLI sent with its requests (codex, Claude Code)."""
    del home
    return {seen.session for seen in model.seen}


@dataclass(frozen=True)
class TestedCli:
    """One agent CLI as the real-CLI tests run it: its scripted provider and what it says
    where CLIs differ. What its runtime can do (cost, turn bound, resume, effort) is read
    from the runtime's record, never from here; this holds only what a test observes."""

    #: The registered runtime it runs as (runners/runtimes/registry.py).
    runtime: str
    #: Its scripted provider, made with the key it expects.
    provider: Callable[[str], ScriptedModel]
    key: str
    #: Models the pinned CLI sends as named: the first runs the lanes and the roles, all
    #: of them are the escalation ladder's.
    models: tuple[str, ...]
    #: The light lane's reasoning effort ("" for the CLI's default).
    effort: str = ""
    #: Plain variables each run of it gets, besides a HOME of the test's own.
    env: Mapping[str, str] = field(default_factory=dict)
    #: Tools a read-only run is not even offered.
    write_tools: frozenset[str] = frozenset()
    #: What the model is told when a read-only run writes a file, and when it runs a
    #: command that writes.
    refused_write: str = ""
    refused_shell: str = ""
    #: What a read-only role holding grants (reviewer, inspector) is told when a command
    #: it runs would write: any of these.
    refused_with_grants: tuple[str, ...] = ()
    #: Its words for a resume of a session it does not know.
    unknown_session: str = ""
    #: Its words when its own turn bound stopped a run (a runtime that bounds turns).
    turn_limit: str = ""
    #: Processes a run is at least (codex starts a helper beside itself).
    processes: int = 1
    #: Its output names the model that answered.
    reports_model: bool = False
    #: The session ids it used: from the wire, or where it keeps them under the home the
    #: bot gave it (`RunRequest.home`).
    sessions: Callable[[ScriptedModel, Path], set[str | None]] = wire_sessions
