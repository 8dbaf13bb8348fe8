"""Claude Code's interactive protocol: the driver of a run the bot can talk to.

Command line: the one-shot one (runners.runtimes.claude) plus

    --input-format stream-json --replay-user-messages
    [--permission-prompt-tool stdio]          (writing roles only)

Measured on the pinned version (transcripts in tests/runners/data/claude_talk/):

- The prompt and every steer are user messages on stdin,
  `{"type":"user","uuid":U,"message":{"role":"user","content":TEXT}}`. The CLI needs
  no `initialize` request first: it answers one (its commands, models, account,
  capabilities) but works the same without it, so none is sent. With pictures
  (`RunRequest.images`, `Steer.images`) `content` is a list: the text block, then an
  `image` block per picture with its bytes in base64 (runners/runtimes/images.py).
- The CLI says `command_lifecycle` with state `queued` and our uuid as `command_uuid`
  as soon as it has read a message (`Delivered`). One it has while a tool runs reaches
  the model in the same turn, with the next tool result; one it gets while the model
  answers becomes a turn of its own after the current one's `result`.
  `--replay-user-messages` echoes each message with `"isReplay":true` and our `uuid`
  when the CLI takes it: that is `Taken`, and so is the
  `command_lifecycle` event with state `started` and our uuid as `command_uuid`, which
  comes beside it (just before or after) and stays short when the echo holds pictures.
- A tool use outside the grants arrives as `control_request` `can_use_tool`; the answer
  is `control_response` allow (`updatedInput`: the input unchanged) or deny with a
  `message`, which reaches the model as the tool's error. `permission_suggestions`
  (rules to allow such calls for good) are never used. Without
  `--permission-prompt-tool stdio` nothing is asked: what the grants do not cover is
  refused by the CLI itself, so a read-only run (`dontAsk`) never asks.
- `control_request` `interrupt` with `cancel_queued` stops the turn: a running command
  is killed, the answer lists the steers it dropped (`cancelled`), a `result` with
  subtype `error_during_execution` follows. Without `cancel_queued` a steer not yet
  taken would start a new turn after the interrupt.
- Each turn ends in a `result`: `usage`, `num_turns` and `duration_ms` are the turn's
  own, `total_cost_usd` and `modelUsage` the whole process's so far.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from runners.pipe import Pipe
from runners.runtimes import images as images_
from runners.runtimes.base import Invocation, Mode, RunRequest
from runners.runtimes.talk import (
    ApprovalAsked,
    Conversation,
    Decision,
    Delivered,
    Interrupt,
    Refused,
    Steer,
    Taken,
)

# The request id of our interrupt; its answer in stdout is how the parser knows that an
# `error_during_execution` was the owner's interrupt and not a failure.
INTERRUPT_ID = "bot-interrupt"
FINISHED = "the run had finished; its answer is being applied"
INTERRUPTED = "the turn was interrupted before the agent took it"
NOT_ASKED = "a read-only run is granted nothing beyond its role"
DENIED = "the owner denied this"


def interactive(invocation: Invocation, mode: Mode) -> Invocation:
    """The one-shot invocation made interactive: the prompt goes over the protocol."""
    argv = list(invocation.argv)
    extra = ["--input-format", "stream-json", "--replay-user-messages"]
    if mode is Mode.WORKSPACE_WRITE:
        extra += ["--permission-prompt-tool", "stdio"]
    at = argv.index("-p") + 1
    argv[at:at] = extra
    return replace(invocation, argv=tuple(argv), stdin="")


def events(stdout: str) -> list[dict[str, Any]]:
    """Every JSON object line of the output; anything else is skipped."""
    found = []
    for line in stdout.splitlines():
        event = _json(line)
        if event is not None:
            found.append(event)
    return found


def interrupted(found: list[dict[str, Any]]) -> bool:
    """The last turn ended because the bot interrupted it: its result is
    `error_during_execution` and the CLI confirmed our interrupt since the turn before."""
    results = [index for index, event in enumerate(found) if event.get("type") == "result"]
    if not results or found[results[-1]].get("subtype") != "error_during_execution":
        return False
    since = results[-2] + 1 if len(results) > 1 else 0
    return any(_answer_to(event, INTERRUPT_ID) is not None for event in found[since : results[-1]])


async def converse(pipe: Pipe, request: RunRequest, conversation: Conversation) -> None:
    await _Driver(pipe, request, conversation).run()


def _json(line: str | bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _answer_to(event: dict[str, Any], request_id: str) -> dict[str, Any] | None:
    """The success payload of a `control_response` to `request_id`, else None."""
    if event.get("type") != "control_response":
        return None
    response = event.get("response")
    if not isinstance(response, dict) or response.get("request_id") != request_id:
        return None
    if response.get("subtype") != "success":
        return None
    payload = response.get("response")
    return payload if isinstance(payload, dict) else {}


def _command_of(tool: str, given: dict[str, Any]) -> str:
    command = given.get("command")
    if tool == "Bash" and isinstance(command, str):
        return command
    return json.dumps(given, ensure_ascii=False, separators=(",", ":"))


class _Driver:
    """One run's conversation: reads the CLI's lines while waiting for the bot's steers,
    interrupts and approval decisions, so none of them waits for another."""

    def __init__(self, pipe: Pipe, request: RunRequest, conversation: Conversation) -> None:
        self.pipe = pipe
        self.request = request
        self.conversation = conversation
        #: Steers written and not yet taken: their uuid -> the bot's key.
        self.unanswered: dict[str, str] = {}
        #: Approvals waiting for the bot, by the CLI's request id.
        self.asking: dict[str, asyncio.Task[None]] = {}
        self.interrupting = False

    async def run(self) -> None:
        await self._send_user(self.request.prompt, self.request.images)
        line = asyncio.ensure_future(self.pipe.lines.get())
        inbox = asyncio.ensure_future(self.conversation.next())
        try:
            while True:
                await asyncio.wait({line, inbox}, return_when=asyncio.FIRST_COMPLETED)
                # The CLI's lines first: a run that just ended refuses a steer that came
                # at the same moment rather than starting a turn for it.
                if line.done():
                    raw = line.result()
                    if raw is None or self._ended_by(raw):
                        return
                    line = asyncio.ensure_future(self.pipe.lines.get())
                if inbox.done():
                    await self._from_bot(inbox.result())
                    inbox = asyncio.ensure_future(self.conversation.next())
        finally:
            line.cancel()
            if inbox.done() and not inbox.cancelled():
                self._refuse(inbox.result(), FINISHED)
            inbox.cancel()
            for task in self.asking.values():
                task.cancel()
            for key in self.unanswered.values():
                self.conversation.tell(Refused(key, FINISHED))
            self.unanswered.clear()
            for item in self.conversation.pending():
                self._refuse(item, FINISHED)

    def _refuse(self, item: Steer | Interrupt, why: str) -> None:
        if isinstance(item, Steer):
            self.conversation.tell(Refused(item.key, why))

    async def _from_bot(self, item: Steer | Interrupt) -> None:
        if isinstance(item, Steer) and self.interrupting:
            # Written now it would start a new turn once the interrupted one ended.
            self.conversation.tell(Refused(item.key, INTERRUPTED))
        elif isinstance(item, Steer):
            self.unanswered[await self._send_user(item.text, item.images)] = item.key
        elif not self.interrupting:
            self.interrupting = True
            await self._send(
                {
                    "type": "control_request",
                    "request_id": INTERRUPT_ID,
                    "request": {"subtype": "interrupt", "cancel_queued": True},
                }
            )

    async def _send_user(self, text: str, images: tuple[Path, ...] = ()) -> str:
        stamp = str(uuid.uuid4())
        message = {"role": "user", "content": await images_.message_content(text, images)}
        await self._send({"type": "user", "uuid": stamp, "message": message})
        return stamp

    async def _send(self, message: dict[str, Any]) -> None:
        await self.pipe.send(json.dumps(message, ensure_ascii=False))

    def _ended_by(self, raw: bytes) -> bool:
        """Handle one line of the CLI; True when the run is over."""
        event = _json(raw)
        if event is None:
            return False
        kind = event.get("type")
        if kind == "user" and event.get("isReplay") is True:
            self._taken(event.get("uuid"))
        elif kind == "command_lifecycle" and event.get("state") == "queued":
            key = self.unanswered.get(str(event.get("command_uuid")))
            if key is not None:
                self.conversation.tell(Delivered(key))
        elif kind == "command_lifecycle" and event.get("state") == "started":
            # Said beside the replay: a replay carrying pictures can be a longer line than
            # the pipe takes (it is dropped), and the steer must not wait for it.
            self._taken(event.get("command_uuid"))
        elif kind == "control_request":
            self._asked(event)
        elif kind == "control_cancel_request":
            task = self.asking.pop(str(event.get("request_id")), None)
            if task is not None:
                task.cancel()
        elif kind == "control_response":
            receipt = _answer_to(event, INTERRUPT_ID)
            dropped = receipt.get("cancelled") if receipt is not None else None
            for stamp in dropped if isinstance(dropped, list) else ():
                key = self.unanswered.pop(str(stamp), None)
                if key is not None:
                    self.conversation.tell(Refused(key, INTERRUPTED))
        elif kind == "result":
            # A steer written and not yet taken starts a turn of its own: wait for it.
            return not self.unanswered
        return False

    def _taken(self, stamp: object) -> None:
        key = self.unanswered.pop(str(stamp), None)
        if key is not None:
            self.conversation.tell(Taken(key))

    def _asked(self, event: dict[str, Any]) -> None:
        request_id = event.get("request_id")
        asked = event.get("request")
        if not isinstance(request_id, str) or not isinstance(asked, dict):
            return
        if asked.get("subtype") != "can_use_tool":
            # Nothing else is ours to answer (hooks, MCP): say so rather than leave it waiting.
            error = {"subtype": "error", "request_id": request_id, "error": "not supported"}
            self._spawn(request_id, self._send({"type": "control_response", "response": error}))
            return
        tool = asked.get("tool_name")
        given = asked.get("input")
        if not isinstance(tool, str) or not isinstance(given, dict):
            self._spawn(request_id, self._answer(request_id, {}, Decision(False, DENIED)))
            return
        reason = asked.get("decision_reason")
        question = ApprovalAsked(
            key=request_id,
            tool=tool,
            command=_command_of(tool, given),
            cwd=str(self.request.cwd),
            reason=reason if isinstance(reason, str) else "",
        )
        self._spawn(request_id, self._decide(question, given))

    def _spawn(self, request_id: str, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self.asking[request_id] = task
        task.add_done_callback(lambda done: self._forget(request_id, done))

    def _forget(self, request_id: str, task: asyncio.Task[None]) -> None:
        if self.asking.get(request_id) is task:
            del self.asking[request_id]

    async def _decide(self, question: ApprovalAsked, given: dict[str, Any]) -> None:
        if self.request.mode is not Mode.WORKSPACE_WRITE:
            decision = Decision(False, NOT_ASKED)
        else:
            with self.pipe.waiting_on_people():
                decision = await self.conversation.decide(question)
        await self._answer(question.key, given, decision)

    async def _answer(self, request_id: str, given: dict[str, Any], decision: Decision) -> None:
        if decision.allow:
            verdict: dict[str, Any] = {"behavior": "allow", "updatedInput": given}
        else:
            verdict = {"behavior": "deny", "message": decision.reason or DENIED}
        response = {"subtype": "success", "request_id": request_id, "response": verdict}
        await self._send({"type": "control_response", "response": response})
