"""Scripted `codex app-server`: the JSON-RPC the bot speaks to codex, answered from a scenario.

    codex [-c key=value]... app-server [-c key=value]...

One JSON object a line on stdin and stdout, as the real one (codex 0.171.0; the shapes
are the captured ones of tests/runners/data/codex_app_server/, cut to what the bot
reads): `initialize`, `thread/start` or `thread/resume` (an unknown session is refused
with the real error), and per `turn/start` one scenario turn picked by the prompt and
played as items (its `steps`, files, agent messages), the thread's cumulative token
usage and `turn/completed` (its `localImage` inputs are shown in the user message item and
logged as `images`). While a turn runs (its `step_delay`s), `turn/steer` is
taken at the next step as a `userMessage` item with the steer's client id, and
`turn/interrupt` ends the turn as interrupted; after it, a steer gets codex's "no
active turn to steer". A step `{"approval": COMMAND, "reason": ...}` asks for an
approval as the real one asks to run a command outside its sandbox
(`item/commandExecution/requestApproval`, as captured in approval_accept.jsonl) and
waits for the answer, taking steers and an interrupt meanwhile: accepted, the command
item completes; declined, it is `declined`. The process ends when stdin closes.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from runners.scripted import agent as script
from runners.scripted import mcp_calls

CLI = "codex"
NO_TURN = {"code": -32600, "message": "no active turn to steer"}


def send(message: dict[str, Any]) -> None:
    script.emit(json.dumps(message))


def notify(method: str, **params: Any) -> None:
    send({"method": method, "params": params})


class Server:
    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.thread = ""
        self.cwd = Path.cwd()
        self.writable = False
        self.turn = ""  # the running turn's id, "" between turns
        self.steers: list[tuple[list[Any], str | None]] = []  # accepted, not yet taken
        self.interrupted = False
        self.requests = 0  # this server's own requests (approvals) so far
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in sys.stdin:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                self.inbox.put(message)
        self.inbox.put(None)

    def serve(self) -> None:
        while (message := self.inbox.get()) is not None:
            self.handle(message)

    def handle(self, message: dict[str, Any]) -> None:
        method, ident = message.get("method"), message.get("id")
        params = raw if isinstance(raw := message.get("params"), dict) else {}
        if ident is None or method is None:
            return  # `initialized`, or an answer to nothing this server waits for
        if method == "initialize":
            home = os.environ.get("CODEX_HOME") or str(Path.home() / ".codex")
            version = script.tested_version(CLI)
            result = {"userAgent": f"scripted/{version}", "codexHome": home}
            send(
                {"id": ident, "result": result | {"platformFamily": "unix", "platformOs": "linux"}}
            )
        elif method in ("thread/start", "thread/resume"):
            self.open_thread(ident, method, params)
        elif method == "turn/start":
            self.start_turn(ident, params)
        elif method == "turn/steer":
            self.steer(ident, params)
        elif method == "turn/interrupt":
            send({"id": ident, "result": {}})
            self.interrupted = bool(self.turn)
        else:
            error = {"code": -32601, "message": f"the scripted codex does not know {method}"}
            send({"id": ident, "error": error})

    def open_thread(self, ident: object, method: str, params: dict[str, Any]) -> None:
        self.cwd = Path(str(params.get("cwd") or Path.cwd()))
        self.writable = params.get("sandbox") in ("workspace-write", "danger-full-access")
        thread = str(params.get("threadId") or "")
        with script.scenario_state() as (_, state):
            known = thread in state.sessions
            total = state.sessions.get(thread)
        if method == "thread/resume" and not known:
            error = {"code": -32600, "message": f"no rollout found for thread id {thread}"}
            send({"id": ident, "error": error})
            return
        self.thread = thread or script.new_session_id()
        shown = {
            "id": self.thread,
            "sessionId": self.thread,
            "cwd": str(self.cwd),
            "model": self.config.get("model"),
            "modelProvider": self.config.get("model_provider", "openai"),
            "status": {"type": "idle"},
            "turns": [],
        }
        send({"id": ident, "result": {"thread": shown, "model": shown["model"]}})
        if method == "thread/start":
            notify("thread/started", thread=shown)
        elif total:
            self.usage(total, "")

    def usage(self, total: dict[str, int], turn: str) -> None:
        counts = {
            "inputTokens": total["input_tokens"],
            "cachedInputTokens": total["cached_input_tokens"],
            "outputTokens": total["output_tokens"],
        }
        notify(
            "thread/tokenUsage/updated",
            threadId=self.thread,
            turnId=turn,
            tokenUsage={"total": counts},
        )

    def steer(self, ident: object, params: dict[str, Any]) -> None:
        if not self.turn or params.get("expectedTurnId") != self.turn or self.interrupted:
            send({"id": ident, "error": NO_TURN})
            return
        self.steers.append((params.get("input") or [], params.get("clientUserMessageId")))
        send({"id": ident, "result": {"turnId": self.turn}})

    def wait(self, seconds: float) -> None:
        """Sleep `seconds` while answering what comes in (steers, an interrupt)."""
        deadline = time.monotonic() + seconds
        while not self.interrupted and (left := deadline - time.monotonic()) > 0:
            try:
                message = self.inbox.get(timeout=left)
            except queue.Empty:
                return
            if message is None:
                sys.exit(0)  # stdin closed mid-turn: the bot ended the run
            self.handle(message)

    def take_steers(self) -> None:
        """Steers reach the model at its next request: shown as the turn's user messages."""
        while self.steers and not self.interrupted:
            given, client = self.steers.pop(0)
            self.item({"type": "userMessage", "clientId": client, "content": _content(given)})

    def item(self, item: dict[str, Any], started: bool = True) -> None:
        item = {"id": f"item_{uuid.uuid4().hex[:8]}", **item}
        where = {"threadId": self.thread, "turnId": self.turn}
        if started:
            notify("item/started", item=item, **where)
        if item["type"] in ("commandExecution", "fileChange"):
            item = item | {"status": "completed"}
        notify("item/completed", item=item, **where)

    def start_turn(self, ident: object, params: dict[str, Any]) -> None:
        given = params.get("input") or []
        prompt = _input_text(params)
        self.turn, self.interrupted = str(uuid.uuid4()), False
        send({"id": ident, "result": {"turn": {"id": self.turn, "status": "inProgress"}}})
        notify("turn/started", threadId=self.thread, turn={"id": self.turn, "status": "inProgress"})
        self.item({"type": "userMessage", "clientId": None, "content": _content(given)})
        try:
            status, error = self.play(prompt, _images(given))
        finally:
            turn, self.turn, self.steers = self.turn, "", []
        turn_shown = {"id": turn, "status": status, "error": error}
        notify("turn/completed", threadId=self.thread, turn=turn_shown)

    def play(self, prompt: str, images: list[str]) -> tuple[str, dict[str, str] | None]:
        """One scenario turn as the items of this turn; its (status, error)."""
        with script.scenario_state() as (turns, state):
            state.calls += 1
            index, turn = script.pick_turn(CLI, prompt, turns, state)
            previous = state.sessions.get(self.thread, {})
            default = {"input_tokens": 100, "cached_input_tokens": 20, "output_tokens": 10}
            usage = turn.get("usage") or default
            total = {key: previous.get(key, 0) + int(usage.get(key, 0)) for key in default}
            state.sessions[self.thread] = total
        record = {"turn": index, "stdin": prompt, "session": self.thread, "config": self.config}
        record["images"] = images
        tools = mcp_calls.server_of_codex(self.config)
        written, _ = script.begin_turn(
            CLI, turn, writable=self.writable, record=record, tools=tools
        )
        missing = _missing_key(self.config)
        if missing:
            notify("error", error={"message": missing}, willRetry=False, threadId=self.thread)
            return "failed", {"message": missing}
        for message in turn.get("error_events") or ():
            notify("error", error={"message": message}, willRetry=True, threadId=self.thread)
        # The turn's tokens count from its first model request, as the real one reports
        # them after it: an interrupted turn has spent them too.
        self.usage(total, self.turn)
        delay = script.scaled(float(turn.get("step_delay", 0)))
        for step in turn.get("steps") or []:
            self.wait(script.scaled(float(step["wait"])) if "wait" in step else delay)
            self.take_steers()
            if self.interrupted:
                return "interrupted", None
            self.show_step(step)
        for name in written:
            self.show_step({"file": name})
        self.wait(delay)
        self.take_steers()
        if self.interrupted:
            return "interrupted", None
        if turn.get("huge_output_bytes"):
            self.item({"type": "agentMessage", "text": "x" * int(turn["huge_output_bytes"])})
        if turn.get("damaged_line") == "before_answer":
            script.emit('{"method":"item/completed","params":{"item":{"type":"agentMess')
        for text in script.answers(turn):
            if text:
                self.item({"type": "agentMessage", "text": text})
        if int(turn.get("exit_code", 0)) or turn.get("damaged_line") == "after_answer":
            # A codex that dies mid-turn: its output ends (damaged, or just ends) with no
            # turn/completed, and it exits with the scenario's status.
            if turn.get("damaged_line") == "after_answer":
                script.emit('{"method":"turn/compl')
            script.finish(turn)
        if turn.get("hang") == "after_output":
            script.hang(turn)
        if turn.get("turn_failed"):
            return "failed", {"message": str(turn["turn_failed"])}
        return "completed", None

    def ask_approval(self, step: dict[str, Any]) -> None:
        command = str(step["approval"])
        shown = f"/bin/bash -lc {shlex.quote(command)}"
        where = {"threadId": self.thread, "turnId": self.turn}
        item = {
            "type": "commandExecution",
            "id": f"call_{uuid.uuid4().hex[:8]}",
            "command": shown,
            "cwd": str(self.cwd),
            "status": "inProgress",
            "commandActions": [{"type": "unknown", "command": command}],
        }
        notify("item/started", item=item, **where)
        ident, self.requests = self.requests, self.requests + 1
        params = {
            "kind": "command",
            **where,
            "itemId": item["id"],
            "reason": str(step.get("reason") or "It runs outside the sandbox."),
            "command": shown,
            "cwd": str(self.cwd),
            "commandActions": item["commandActions"],
            "availableDecisions": ["accept", "cancel"],
        }
        send({"method": "item/commandExecution/requestApproval", "id": ident, "params": params})
        decision = self.answer_to(ident)
        if decision is None:
            return  # interrupted while it waited
        notify("serverRequest/resolved", threadId=self.thread, requestId=ident)
        accepted = decision == "accept" or isinstance(decision, dict)
        done = {
            "status": "completed" if accepted else "declined",
            "exitCode": 0 if accepted else None,
            "aggregatedOutput": str(step.get("output", "")) if accepted else None,
        }
        notify("item/completed", item=item | done, **where)

    def answer_to(self, ident: int) -> object:
        """The decision the bot answers request `ident` with; None when the turn was
        interrupted first. What else comes meanwhile is handled as always."""
        while not self.interrupted:
            message = self.inbox.get()
            if message is None:
                sys.exit(0)  # stdin closed: the bot ended the run
            if message.get("id") == ident and "method" not in message:
                result = message.get("result")
                return result.get("decision") if isinstance(result, dict) else "decline"
            self.handle(message)
        return None

    def show_step(self, step: dict[str, Any]) -> None:
        if "approval" in step:
            self.ask_approval(step)
        elif "command" in step:
            command = str(step["command"])
            self.item(
                {
                    "type": "commandExecution",
                    "command": f"/bin/bash -lc {shlex.quote(command)}",
                    "cwd": str(self.cwd),
                    "commandActions": [{"type": "unknown", "command": command}],
                    "exitCode": 0,
                }
            )
        else:
            change = {"path": str(self.cwd / step["file"]), "kind": {"type": "update"}, "diff": ""}
            self.item({"type": "fileChange", "changes": [change]})


def _input_text(params: dict[str, Any]) -> str:
    parts = raw if isinstance(raw := params.get("input"), list) else []
    return "".join(str(part.get("text", "")) for part in parts if isinstance(part, dict))


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "text_elements": []}


def _content(given: list[Any]) -> list[dict[str, Any]]:
    """A user message's input as the real one shows it in its `userMessage` item: text
    parts and `localImage` parts (with `detail`), in order."""
    shown = []
    for part in given:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "localImage":
            shown.append({"type": "localImage", "detail": None, "path": str(part.get("path"))})
        else:
            shown.append(_text(str(part.get("text", ""))))
    return shown


def _images(given: list[Any]) -> list[str]:
    return [
        str(part.get("path"))
        for part in given
        if isinstance(part, dict) and part.get("type") == "localImage"
    ]


def _missing_key(config: dict[str, Any]) -> str | None:
    """A custom provider whose `env_key` variable is unset fails the turn, as the real one."""
    provider = config.get("model_provider")
    env_key = config.get(f"model_providers.{provider}.env_key") if provider else None
    if env_key and not os.environ.get(env_key):
        return f"Missing environment variable: `{env_key}`."
    return None


def main(config: dict[str, Any]) -> None:
    Server(config).serve()
