"""Scripted `claude`'s interactive side: `-p --input-format stream-json`, as the real one
speaks it (runners/runtimes/claude_talk.py says what was measured).

The prompt is the first user message on stdin (an `initialize` request before it is
answered). The turn's `steps` are its tool calls; a user message written while they run
is echoed (`--replay-user-messages`, with its `uuid`) when the next step begins, as the
real CLI folds it into the running turn; one written after the result starts a turn of
its own, answered with the same answer. An `interrupt` stops the turn: its answer lists
the messages not yet taken as cancelled, then `error_during_execution`. Nothing is ever
asked: the scenario's steps need no approval. Closing stdin ends the process.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
import uuid
from typing import Any, NoReturn

from runners.scripted import agent as script

INTERRUPTED_TOOL = "[Request interrupted by user for tool use]"


class Stdin:
    """Lines of stdin as JSON objects, waited for with a timeout."""

    def __init__(self) -> None:
        self.buffer = b""
        self.ended = False

    def next(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next message; None at the end of stdin or when `timeout` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer and not self.ended:
            left = None if deadline is None else max(deadline - time.monotonic(), 0)
            if not select.select([0], [], [], left)[0]:
                return None
            chunk = os.read(0, 65536)
            self.buffer += chunk
            self.ended = not chunk
        if not self.buffer.strip():
            self.buffer = b""
            return None
        line, _, self.buffer = self.buffer.partition(b"\n")
        if not line.strip():
            return self.next(timeout)
        try:
            message = json.loads(line)
        except ValueError:
            script.fail(f"Error parsing streaming input line ({len(line)} chars): SyntaxError")
        if not isinstance(message, dict):
            script.fail("Error parsing streaming input line: not an object")
        return message


def text_of(message: dict[str, Any]) -> str:
    content = (message.get("message") or {}).get("content")
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type", "text") == "text"
        )
    return content if isinstance(content, str) else ""


def images_of(message: dict[str, Any]) -> list[str]:
    """The media types of a user message's image blocks, as the scripted log shows them."""
    content = (message.get("message") or {}).get("content")
    return [
        str((part.get("source") or {}).get("media_type"))
        for part in (content if isinstance(content, list) else [])
        if isinstance(part, dict) and part.get("type") == "image"
    ]


def first_message(stdin: Stdin) -> dict[str, Any]:
    """The prompt's message; the end of stdin before one ends the process quietly."""
    while True:
        message = stdin.next()
        if message is None:
            sys.exit(0)
        if message.get("type") == "user":
            return message
        if message.get("type") == "control_request":
            answer(
                message,
                {"pid": os.getpid(), "claude_code_version": script.tested_version("claude")},
            )


def answer(request: dict[str, Any], payload: dict[str, Any]) -> None:
    response = {"subtype": "success", "request_id": request.get("request_id"), "response": payload}
    script.emit(json.dumps({"type": "control_response", "response": response}))


class Talk:
    """One process's turns: the first from the scenario, later ones from steers."""

    def __init__(
        self, stdin: Stdin, turn: dict[str, Any], session: str, replay: bool, events: dict[str, Any]
    ) -> None:
        self.stdin = stdin
        self.turn = turn
        self.session = session
        self.replay = replay
        self.events = events
        self.waiting: list[dict[str, Any]] = []

    def run(self, prompt: dict[str, Any], hang: bool = False) -> NoReturn:
        script.emit(json.dumps(self.events["init"]))
        if hang:
            # The model never answers; only an interrupt (or a kill) ends the turn.
            while not self.stdin.ended:
                self.listen(3600.0)
            script.hang(self.turn)
        self.take(prompt)
        for step in self.turn.get("steps") or []:
            tool = ("Bash", {"command": step["command"]}) if "command" in step else None
            tool = tool or ("Edit", {"file_path": step["file"]})
            use = {"type": "tool_use", "id": "toolu_1", "name": tool[0], "input": tool[1]}
            script.emit(json.dumps(self.assistant([use])))
            self.listen(script.scaled(float(self.turn.get("step_delay", 0))))
            for held in self.waiting:
                self.take(held)
            self.waiting = []
        self.finish_turn()
        while True:
            message = self.stdin.next()
            if message is None:
                script.finish(self.turn)
            if message.get("type") == "user":
                # Written after the result: a turn of its own.
                script.emit(json.dumps(self.events["init"]))
                self.take(message)
                self.finish_turn()
            elif message.get("type") == "control_request":
                answer(message, {"still_queued": [], "cancelled": []})

    def listen(self, seconds: float) -> None:
        """The step runs for `seconds`; what is written meanwhile waits for the next one."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            message = self.stdin.next(left)
            if message is None:
                if self.stdin.ended:
                    return
                continue
            if message.get("type") == "user":
                self.waiting.append(message)
            elif message.get("type") == "control_request":
                if (message.get("request") or {}).get("subtype") == "interrupt":
                    self.interrupted(message)
                answer(message, {})

    def interrupted(self, request: dict[str, Any]) -> NoReturn:
        dropped = [str(message.get("uuid")) for message in self.waiting if message.get("uuid")]
        answer(request, {"still_queued": [], "cancelled": dropped})
        text = {"type": "text", "text": INTERRUPTED_TOOL}
        script.emit(json.dumps(self.user([text])))
        result = {key: value for key, value in self.events["result"].items() if key != "result"}
        result.update(
            subtype="error_during_execution",
            is_error=True,
            errors=["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"],
            terminal_reason="aborted_tools",
            uuid=str(uuid.uuid4()),
        )
        script.emit(json.dumps(result))
        while self.stdin.next() is not None:
            pass
        sys.exit(1)

    def take(self, message: dict[str, Any]) -> None:
        if self.replay:
            # The message as it was written, pictures and all (the real one echoes it so).
            content = (message.get("message") or {}).get("content")
            echo = {
                "type": "user",
                "message": {"role": "user", "content": content},
                "session_id": self.session,
                "parent_tool_use_id": None,
                "uuid": message.get("uuid") or str(uuid.uuid4()),
                "isReplay": True,
            }
            script.emit(json.dumps(echo))

    def finish_turn(self) -> None:
        script.emit(json.dumps(self.events["assistant"]))
        script.emit(json.dumps({**self.events["result"], "uuid": str(uuid.uuid4())}))

    def assistant(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        return {**self.events["assistant"], "message": {"role": "assistant", "content": content}}

    def user(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        message = {"role": "user", "content": content}
        return {"type": "user", "message": message, "session_id": self.session}
