"""What `codex app-server` prints, read: the run's answer and telemetry, its steps.

The output is the app-server's side of the JSON-RPC conversation (codex_talk.py),
one object a line: answers to the bot's requests (by the ids below), notifications
(`thread/started`, `item/started`, `item/completed`, `thread/tokenUsage/updated`,
`turn/completed`, `error`, ...) and the CLI's own requests (approvals). Shapes as
measured on codex 0.171.0 (tests/runners/data/codex_app_server/).
"""

from __future__ import annotations

import json
from typing import Any

from runners.runtimes import codex_limits
from runners.runtimes.base import RunOutput, Usage, as_int, as_str, clean_detail

# The ids of the requests that start a run: a refusal of one of these ends the run, and
# the parser finds it in the output by its id alone.
INITIALIZE = "initialize"
THREAD = "thread"
TURN = "turn"
_STARTS = {INITIALIZE: "initialize", THREAD: "the thread", TURN: "the turn"}


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def command_of(params: dict[str, Any]) -> str:
    """The command a command item or approval is about: the model's own command line
    (the one parsed action's), else the shell-wrapped one codex runs (`bash -lc ...`)."""
    actions = params.get("commandActions")
    if isinstance(actions, list) and len(actions) == 1:
        raw = as_str(_dict(actions[0]).get("command"))
        if raw:
            return raw
    return as_str(params.get("command")) or ""


def user_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    parts = content if isinstance(content, list) else []
    return "".join(as_str(_dict(part).get("text")) or "" for part in parts)


def step_of(event: dict[str, object]) -> str | None:
    """The step a notification shows: a command started, files changed."""
    method = event.get("method")
    item = _dict(_dict(event.get("params")).get("item"))
    kind = item.get("type")
    if method == "item/started" and kind == "commandExecution":
        command = command_of(item)
        return f"ran: {command}" if command else None
    if method == "item/completed" and kind == "fileChange" and item.get("status") == "completed":
        changes = item.get("changes")
        paths = [
            path
            for change in (changes if isinstance(changes, list) else [])
            if (path := as_str(_dict(change).get("path")))
        ]
        return f"changed: {', '.join(paths)}" if paths else None
    return None


def _usage(value: object) -> Usage | None:
    total = _dict(_dict(value).get("total"))
    keys = ("inputTokens", "cachedInputTokens", "outputTokens")
    counts = [as_int(total.get(key)) for key in keys]
    if all(count is None for count in counts):
        return None
    return Usage(*(count or 0 for count in counts))


def _message(value: object) -> str:
    error = _dict(value)
    return as_str(error.get("message")) or json.dumps(value)[:200]


class _Reading:
    """The run as its output tells it, line by line."""

    def __init__(self) -> None:
        self.session: str | None = None
        self.turn: str | None = None
        self.model: str | None = None
        self.parts: list[str] = []
        self.usage: Usage | None = None
        self.turns = 0
        self.status: str | None = None
        self.turn_error = ""
        self.refused: str | None = None
        self.errors: list[str] = []

    def ours(self, params: dict[str, Any]) -> bool:
        # Sub-agents run threads of their own; only the run's thread counts.
        thread = params.get("threadId")
        return self.session is None or thread is None or thread == self.session

    def line(self, message: dict[str, Any]) -> None:
        ident = message.get("id")
        method = message.get("method")
        if method is None and isinstance(ident, str) and ident in _STARTS:
            self.answer(ident, message)
            return
        if not isinstance(method, str) or ident is not None:
            return  # an answer to a steer or interrupt, or a request of the CLI
        params = _dict(message.get("params"))
        if method == "thread/started":
            thread = _dict(params.get("thread"))
            self.session = self.session or as_str(thread.get("id"))
            self.model = self.model or as_str(thread.get("model"))
        elif not self.ours(params):
            return
        elif method == "item/completed":
            item = _dict(params.get("item"))
            text = as_str(item.get("text"))
            if item.get("type") == "agentMessage" and text and text.strip():
                self.parts.append(text)
        elif method == "thread/tokenUsage/updated":
            self.usage = _usage(params.get("tokenUsage")) or self.usage
        elif method == "turn/completed":
            turn = _dict(params.get("turn"))
            if self.turn is None or turn.get("id") != self.turn:
                return  # not the turn this run started (codex answers turn/start first)
            self.turns += 1
            self.status = as_str(turn.get("status"))
            self.turn_error = _message(turn.get("error")) if turn.get("error") else ""
        elif method == "error":
            self.errors.append(_message(params.get("error")))

    def answer(self, ident: str, message: dict[str, Any]) -> None:
        if "error" in message:
            self.refused = f"codex refused {_STARTS[ident]}: {_message(message.get('error'))}"
            return
        result = _dict(message.get("result"))
        if ident == TURN:
            self.turn = as_str(_dict(result.get("turn")).get("id"))
        if ident == THREAD:
            thread = _dict(result.get("thread"))
            self.session = as_str(thread.get("id")) or self.session
            self.model = as_str(result.get("model")) or as_str(thread.get("model")) or self.model

    def failure(self, answer: str) -> str | None:
        if self.refused:
            return self.refused
        if self.status == "failed":
            return f"codex turn failed: {self.turn_error or 'no message'}"
        if self.status == "interrupted":
            return None
        if self.status != "completed":
            last = f"; last error: {self.errors[-1]}" if self.errors else ""
            return f"codex ended before its turn completed{last}"
        if not answer:
            last = f"; last error: {self.errors[-1]}" if self.errors else ""
            return f"codex gave no answer{last}"
        return None


def parse_output(stdout: str, previous_usage: Usage | None = None) -> RunOutput:
    """Read what `codex app-server` printed during one run.

    The answer is the text of every completed agent message of the run's thread, in
    order, as with `exec`. The run succeeded only if its turn completed; an interrupted
    turn is no failure (`interrupted=True`, the session can resume). A refused
    handshake, thread or turn (an unknown session to resume) and a failed turn are
    failures with codex's words; `error` notifications alone are not (codex retries).
    Lines that are not JSON objects are skipped: the protocol's own answers decide.
    Token usage is the thread's running total (cumulative like `exec`'s), so a resumed
    run's share is its reading less `previous_usage`.
    """
    reading = _Reading()
    for line in stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            reading.line(message)
    answer = "\n\n".join(reading.parts).strip()
    usage = reading.usage
    if usage is not None and previous_usage is not None:
        usage = usage.minus(previous_usage)
    failure = reading.failure(answer)
    return RunOutput(
        answer=answer,
        session_id=reading.session,
        usage=usage,
        thread_usage=reading.usage,
        turns=reading.turns or None,
        model=reading.model,
        failure=clean_detail(failure) if failure else None,
        limited=(codex_limits.limited(reading.turn_error) if reading.status == "failed" else None),
        interrupted=reading.status == "interrupted" and not reading.refused,
    )
