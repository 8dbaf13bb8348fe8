"""Codex through `codex app-server`: a run the bot can steer, interrupt and ask.

Command line (the provider and model overrides are the ones `exec` gets):

    codex [-c model_provider=... (with base_url)] [-c model="M"]
          [-c model_reasoning_effort="E"] app-server

JSON-RPC over stdio, one object a line (measured on codex 0.171.0, see
tests/runners/data/codex_app_server/): `initialize` and `initialized`, then
`thread/start` (or `thread/resume` of the builder's session) with the working
directory, sandbox and approval policy, then one `turn/start` carrying the prompt
and the request's images (`localImage` items after the text; a steer's go the same way).
While the turn runs, a steer is `turn/steer` (its answer: codex has it, `Delivered`;
the agent takes it at its next model request: the `userMessage` item that follows,
recognised by its client id, `Taken`), an
interrupt `turn/interrupt`, and the agent's approval requests are answered once
each. The run is over when the turn completes; the parser (codex_wire.py) reads the
whole output afterwards.

Approval policy per mode: a writing role works in the `workspace-write` sandbox
under `on-request`, where codex asks only when the model wants a command to run
outside the sandbox (`sandbox_permissions: "require_escalated"`) or a file changed
outside the workspace; everything its sandbox allows runs unasked. (Measured:
`untrusted` asks for every command, even `echo`; `never` refuses escalations to the
model without asking anyone.) A read-only role keeps `never` in the read-only
sandbox, as with `exec`: nothing is asked, a write fails in the sandbox.

An interrupt leaves the running command running (codex keeps it as a background
terminal); the end of the run ends the process group and it with it. Its sandbox then
leaves empty `.git`, `.agents`, `.codex` mount points in `/tmp` (measured: also after
`thread/backgroundTerminals/clean`; only a command that finishes removes them).

app-server has no `--ignore-user-config` (only `exec` has): `-c` overrides win over
`$CODEX_HOME/config.toml` for every key the bot sets (provider, model, effort), and
the sandbox and approval policy go in `thread/start`, which win too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from runners.pipe import Pipe
from runners.runtimes import codex_wire as wire
from runners.runtimes import tool_config
from runners.runtimes.base import (
    SESSION_ID_RE,
    InvalidRequest,
    Invocation,
    Mode,
    RunRequest,
    as_str,
    validate_request,
)
from runners.runtimes.talk import (
    ApprovalAsked,
    Conversation,
    Decision,
    Delivered,
    Interrupt,
    Refused,
    Steer,
    Taken,
    Talking,
)

SANDBOX = {Mode.READ_ONLY: "read-only", Mode.WORKSPACE_WRITE: "workspace-write"}
APPROVAL = {Mode.READ_ONLY: "never", Mode.WORKSPACE_WRITE: "on-request"}
CLIENT_INFO = {"name": "intent-board", "version": "1"}
FINISHED = "the run had finished; its answer is being applied"
# A method codex may ask that the bot has no answer for (user input in plan mode, MCP
# elicitations, permission profiles): answered with this error, the CLI goes on without.
NOT_SUPPORTED = -32601


def user_input(text: str, images: Sequence[Path]) -> list[dict[str, str]]:
    """A user message as app-server input: the text, then each picture as a `localImage`
    (codex reads the file and sends it to the model as an image; one it cannot read
    becomes a line of text saying so, and the turn goes on)."""
    pictures = [{"type": "localImage", "path": str(image)} for image in images]
    return [{"type": "text", "text": text}, *pictures]


def config_options(request: RunRequest) -> list[str]:
    """Model and reasoning effort as `-c` overrides (TOML strings of validated words)."""
    options: list[str] = []
    if request.model:
        options += ["-c", f"model={json.dumps(request.model)}"]
    if request.reasoning_effort:
        options += ["-c", f"model_reasoning_effort={json.dumps(request.reasoning_effort)}"]
    return options


def invocation(
    request: RunRequest, runtime: str, provider: list[str], secrets: Mapping[str, Path]
) -> Invocation:
    """The app-server's command line; `provider` are the `-c` provider overrides."""
    validate_request(request)
    tools = tool_config.codex_options(request.tools)
    argv = [request.binary, *provider, *config_options(request), *tools, "app-server"]
    return Invocation(
        runtime=runtime,
        argv=tuple(argv),
        cwd=request.cwd,
        secret_env_files=MappingProxyType(dict(secrets)),
    )


def hand_over_line(
    request: RunRequest, session_id: str, provider: list[str], secrets: Mapping[str, Path]
) -> str:
    """`codex resume <id>` in the run's folder with its provider, model and sandbox.

    The key goes in as `VAR="$(cat FILE)"`: the line names the file, never the key.
    Approvals are `on-request`: the person at the terminal answers them.
    """
    validate_request(request)
    if not SESSION_ID_RE.fullmatch(session_id):
        raise InvalidRequest("invalid session id to hand over")
    argv = [request.binary, "resume", *provider, *config_options(request)]
    argv += ["--sandbox", SANDBOX[request.mode], "--ask-for-approval", "on-request"]
    argv += ["-C", str(request.cwd), session_id]
    keys = [f'{name}="$(cat {shlex.quote(str(path))})"' for name, path in secrets.items()]
    return " ".join([*keys, shlex.join(argv)])


class _Driver:
    """One run's side of the conversation: the handshake, the turn, what comes in."""

    def __init__(self, pipe: Pipe, request: RunRequest, conversation: Conversation) -> None:
        self.pipe = pipe
        self.request = request
        self.conversation = conversation
        self.answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.thread = ""
        self.turn = ""
        self.over = asyncio.Event()
        self.gone = False  # its output ended
        # Turns codex said are over: a fast turn can end before its start is answered.
        self.ended: set[str] = set()
        # Steers codex accepted and has not yet put before the model, by client id.
        self.steering: dict[str, Steer] = {}
        # What a file-change approval is about: its item's changes, by item id.
        self.changes: dict[str, object] = {}
        self.asking: dict[str, asyncio.Task[None]] = {}
        self.numbers = iter(range(1, 1 << 62))

    async def run(self) -> None:
        reader = asyncio.ensure_future(self._read())
        try:
            if await self._start():
                await self._talk()
        finally:
            reader.cancel()
            for task in self.asking.values():
                task.cancel()
            await asyncio.gather(reader, *self.asking.values(), return_exceptions=True)
            left = list(self.steering.values())
            left += [item for item in self.conversation.pending() if isinstance(item, Steer)]
            for steer in left:
                self.conversation.tell(Refused(steer.key, FINISHED))

    # --- requests ---------------------------------------------------------------------

    async def _ask(self, ident: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request and wait for its answer; {} when codex ended without one."""
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if self.gone:
            return {}
        self.answers[ident] = answer
        await self.pipe.send(json.dumps({"id": ident, "method": method, "params": params}))
        return await answer

    async def _start(self) -> bool:
        """Handshake, thread and turn; False when codex refused one (the parser says why)."""
        said = await self._ask(wire.INITIALIZE, "initialize", {"clientInfo": CLIENT_INFO})
        if "result" not in said:
            return False
        await self.pipe.send(json.dumps({"method": "initialized"}))
        mode = self.request.mode
        params: dict[str, Any] = {
            "cwd": str(self.request.cwd),
            "sandbox": SANDBOX[mode],
            "approvalPolicy": APPROVAL[mode],
        }
        if self.request.resume_session_id:
            # Without the earlier turns in the answer: the output holds only this run's.
            params |= {"threadId": self.request.resume_session_id, "excludeTurns": True}
            said = await self._ask(wire.THREAD, "thread/resume", params)
        else:
            said = await self._ask(wire.THREAD, "thread/start", params)
        thread = _dict(_dict(said.get("result")).get("thread"))
        self.thread = as_str(thread.get("id")) or ""
        if not self.thread:
            return False
        given = user_input(self.request.prompt, self.request.images)
        said = await self._ask(wire.TURN, "turn/start", {"threadId": self.thread, "input": given})
        self.turn = as_str(_dict(_dict(said.get("result")).get("turn")).get("id")) or ""
        if self.turn in self.ended:
            self.over.set()
        return bool(self.turn)

    # --- what the bot sends -----------------------------------------------------------

    async def _talk(self) -> None:
        over: asyncio.Future[Any] = asyncio.ensure_future(self.over.wait())
        told: asyncio.Future[Steer | Interrupt] | None = None
        try:
            while not self.over.is_set():
                told = told or asyncio.ensure_future(self.conversation.next())
                await asyncio.wait({over, told}, return_when=asyncio.FIRST_COMPLETED)
                if not told.done():
                    continue
                item, told = told.result(), None
                if isinstance(item, Interrupt):
                    await self._interrupt()
                else:
                    await self._steer(item)
        finally:
            over.cancel()
            if told is not None:
                told.cancel()

    async def _steer(self, steer: Steer) -> None:
        if self.over.is_set():
            self.conversation.tell(Refused(steer.key, FINISHED))
            return
        self.steering[steer.key] = steer
        said = await self._ask(
            f"steer-{next(self.numbers)}",
            "turn/steer",
            {
                "threadId": self.thread,
                "expectedTurnId": self.turn,
                "input": user_input(steer.text, steer.images),
                "clientUserMessageId": steer.key,
            },
        )
        if "result" in said:
            if steer.key in self.steering:  # not taken already: its item can come first
                self.conversation.tell(Delivered(steer.key))
        elif self.steering.pop(steer.key, None) is not None:
            # "no active turn to steer": the turn ended while the steer was on its way.
            self.conversation.tell(Refused(steer.key, FINISHED))

    async def _interrupt(self) -> None:
        if self.over.is_set():
            return
        ident = f"interrupt-{next(self.numbers)}"
        await self._ask(ident, "turn/interrupt", {"threadId": self.thread, "turnId": self.turn})
        # Confirmed by the turn's completion (status "interrupted"), within milliseconds.
        await self.over.wait()

    # --- what codex says --------------------------------------------------------------

    async def _read(self) -> None:
        try:
            while (line := await self.pipe.lines.get()) is not None:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    await self._dispatch(message)
        finally:
            # Codex is gone: nothing more will be answered, and the turn is over.
            self.gone = True
            self.over.set()
            for answer in self.answers.values():
                if not answer.done():
                    answer.set_result({})

    async def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        ident = message.get("id")
        params = _dict(message.get("params"))
        if isinstance(method, str) and ident is not None:
            asked = self._asked(ident, method, params)
            key = json.dumps(ident)
            if asked is None:
                # Nothing a person could answer: refused at once, the turn goes on.
                error = {"code": NOT_SUPPORTED, "message": f"{method} is not supported here"}
                await self.pipe.send(json.dumps({"id": ident, "error": error}))
            elif key not in self.asking:
                turn = as_str(params.get("turnId")) or self.turn
                self.asking[key] = asyncio.ensure_future(self._answer(ident, asked, turn))
        elif isinstance(method, str):
            self._notice(method, params)
        elif isinstance(ident, str) and ident in self.answers:
            answer = self.answers.pop(ident)
            if not answer.done():
                answer.set_result(message)

    def _notice(self, method: str, params: dict[str, Any]) -> None:
        item = _dict(params.get("item"))
        if method == "item/started" and item.get("type") == "userMessage":
            self._taken(item)
        elif method == "item/started" and item.get("type") == "fileChange":
            self.changes[str(item.get("id"))] = item.get("changes")
        elif method == "serverRequest/resolved":
            # Codex settled it itself (the turn ended): nobody need answer any more.
            task = self.asking.get(json.dumps(params.get("requestId")))
            if task is not None:
                task.cancel()
        elif method == "turn/completed":
            ended = as_str(_dict(params.get("turn")).get("id"))
            if ended is not None:
                self.ended.add(ended)
                if ended == self.turn:
                    self.over.set()

    def _taken(self, item: dict[str, Any]) -> None:
        key = as_str(item.get("clientId"))
        if key is None:
            # No client id echoed: the first waiting steer with the same text.
            text = wire.user_text(item)
            key = next((k for k, s in self.steering.items() if s.text == text), None)
        if key is not None and self.steering.pop(key, None) is not None:
            self.conversation.tell(Taken(key))

    async def _answer(self, ident: object, asked: ApprovalAsked, turn: str) -> None:
        with self.pipe.waiting_on_people():
            decision = await self.conversation.decide(asked)
        await self._decide(ident, asked, decision, turn)

    def _asked(self, ident: object, method: str, params: dict[str, Any]) -> ApprovalAsked | None:
        key = str(ident)
        reason = as_str(params.get("reason")) or ""
        cwd = as_str(params.get("cwd")) or str(self.request.cwd)
        if method == "item/commandExecution/requestApproval":
            return ApprovalAsked(key, "command", wire.command_of(params), cwd, reason)
        if method == "item/fileChange/requestApproval":
            changes = self.changes.get(str(params.get("itemId")))
            shown = json.dumps(changes, ensure_ascii=False, separators=(",", ":"))
            reason = reason or as_str(params.get("grantRoot")) or ""
            return ApprovalAsked(key, "file_change", shown, cwd, reason)
        return None

    async def _decide(
        self, ident: object, asked: ApprovalAsked, decision: Decision, turn: str
    ) -> None:
        if decision.allow:
            await self.pipe.send(json.dumps({"id": ident, "result": {"decision": "accept"}}))
            return
        if decision.reason and not self.over.is_set():
            # The protocol's decline carries no reason: the reason goes first, as a steer,
            # and the model's next request carries both.
            text = f"The owner declined this request ({asked.command}): {decision.reason}"
            with contextlib.suppress(Exception):
                await self._ask(
                    f"reason-{next(self.numbers)}",
                    "turn/steer",
                    {
                        "threadId": self.thread,
                        "expectedTurnId": turn,
                        "input": [{"type": "text", "text": text}],
                    },
                )
        await self.pipe.send(json.dumps({"id": ident, "result": {"decision": "decline"}}))


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


async def converse(pipe: Pipe, request: RunRequest, conversation: Conversation) -> None:
    await _Driver(pipe, request, conversation).run()


def talking(build_argv: Any) -> Talking:
    """Codex's `Talking` for a command line made by `build_argv` (codex's, openrouter's)."""
    return Talking(
        build_argv=build_argv,
        converse=converse,
        parse_output=wire.parse_output,
        step_of=wire.step_of,
    )
