"""Scripted `claude`: the real CLI's options for `-p`, answers from a scenario.

Accepts  claude -p [OPTIONS] [PROMPT]  (prompt from stdin when not given) and
prints the `--output-format json` result object, or the `stream-json` events; with
`--input-format stream-json` it talks as the real one does (claude_talk.py).
Scenarios: tests/bin/README.md.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from typing import Any

from runners.scripted import agent as script
from runners.scripted import claude_talk, mcp_calls

CLI = "claude"
ALIASES = {
    "-r": "--resume",
    "--allowed-tools": "--allowedTools",
    "--disallowed-tools": "--disallowedTools",
    "--print": "-p",
}
CHOICES = {
    "--output-format": {"text", "json", "stream-json"},
    "--input-format": {"text", "stream-json"},
    # "default" is no longer listed by the real CLI but still accepted.
    "--permission-mode": {
        "acceptEdits",
        "auto",
        "bypassPermissions",
        "default",
        "dontAsk",
        "manual",
        "plan",
    },
}
# An unknown effort is only warned about by the real CLI.
EFFORTS = {"low", "medium", "high", "xhigh", "max"}
VALUE = {
    "--output-format",
    "--permission-mode",
    "--settings",
    "--setting-sources",
    "--allowedTools",
    "--disallowedTools",
    "--add-dir",
    "--model",
    "--effort",
    "--max-turns",
    "--resume",
    "--append-system-prompt",
    "--fallback-model",
    "--input-format",
    "--permission-prompt-tool",
    "--mcp-config",
}
FLAGS = {
    "-p",
    "--verbose",
    "--dangerously-skip-permissions",
    "--replay-user-messages",
    "--strict-mcp-config",
}
REPEATABLE = {"--add-dir"}
# The write tools of the tested Claude Code (it has no MultiEdit any more).
WRITE_TOOLS = {"Edit", "Write", "NotebookEdit"}


def parse(argv: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {"--add-dir": [], "prompt": None}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name = ALIASES.get(arg, arg)
        if name in FLAGS:
            opts[name] = True
        elif name in VALUE:
            if i + 1 >= len(argv):
                raise script.UsageError(f"option '{name} <value>' argument missing")
            i += 1
            value = argv[i]
            if name in CHOICES and value not in CHOICES[name]:
                allowed = ", ".join(sorted(CHOICES[name]))
                raise script.UsageError(
                    f"option '{name}' argument '{value}' is invalid. Allowed choices are {allowed}."
                )
            if name == "--max-turns" and not value.isdigit():
                raise script.UsageError(
                    f"option '--max-turns <turns>' argument '{value}' is invalid. must be a number"
                )
            if name == "--effort" and value not in EFFORTS:
                sys.stderr.write(
                    f"Warning: Unknown --effort value '{value}' — ignoring it and using the "
                    "default effort. Valid values: low, medium, high, xhigh, max.\n"
                )
            if name in REPEATABLE:
                opts[name].append(value)
            elif name in opts:
                raise script.UsageError(f"option '{name}' given twice")
            else:
                opts[name] = value
        elif arg.startswith("-"):
            raise script.UsageError(f"unknown option '{arg}'")
        elif opts["prompt"] is None:
            opts["prompt"] = arg
        else:
            raise script.UsageError(f"too many arguments. Expected 1 argument but got {arg!r} too.")
        i += 1
    if not opts.get("-p"):
        raise script.UsageError("the fake claude only implements -p (print mode)")
    streams = opts.get("--output-format") == "stream-json"
    talks = opts.get("--input-format") == "stream-json"
    if talks and not streams:
        raise script.UsageError("--input-format=stream-json requires output-format=stream-json.")
    if opts.get("--replay-user-messages") and not (talks and streams):
        raise script.UsageError(
            "--replay-user-messages requires both --input-format=stream-json and "
            "--output-format=stream-json."
        )
    return opts


def can_write(opts: dict[str, Any]) -> bool:
    denied = set(opts.get("--disallowedTools", "").replace(",", " ").split())
    return not (denied & WRITE_TOOLS) and opts.get("--permission-mode") != "plan"


def result_object(turn: dict[str, Any], session: str, answer: str) -> dict[str, Any]:
    usage = {
        "input_tokens": 12,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 300,
        "output_tokens": 40,
    }
    usage.update(turn.get("usage") or {})
    model = turn.get("model", "claude-sonnet-4-5-20250929")
    subtype = turn.get("subtype", "success")
    # The real CLI flags every non-success ending as an error.
    is_error = bool(turn.get("is_error", subtype != "success"))
    result = {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "duration_ms": int(turn.get("duration_ms", 2345)),
        "duration_api_ms": 2000,
        "num_turns": int(turn.get("num_turns", 3)),
        "session_id": session,
        "total_cost_usd": float(turn.get("cost_usd", 0.0123)),
        "usage": {
            **usage,
            "server_tool_use": {"web_search_requests": 0},
            "service_tier": "standard",
        },
        "modelUsage": {
            model: {
                "inputTokens": usage["input_tokens"],
                "outputTokens": usage["output_tokens"],
                "cacheReadInputTokens": usage["cache_read_input_tokens"],
                "cacheCreationInputTokens": usage["cache_creation_input_tokens"],
                "costUSD": float(turn.get("cost_usd", 0.0123)),
            }
        },
        "permission_denials": [],
        "terminal_reason": "max_turns" if subtype == "error_max_turns" else "completed",
        "uuid": str(uuid.uuid4()),
    }
    if subtype == "success":
        result["result"] = answer
    if "errors" in turn:
        result["errors"] = turn["errors"]
    return result


def main() -> None:
    if sys.argv[1:] in (["--version"], ["-v"]):
        print(f"{script.tested_version(CLI)} (Claude Code)")
        sys.exit(0)
    try:
        opts = parse(sys.argv[1:])
    except script.UsageError as error:
        # commander's words and exit status
        script.usage_exit(CLI, str(error), f"error: {error}\n", 1)
    talking = None
    if opts.get("--input-format") == "stream-json":
        if not opts.get("--verbose"):
            script.fail("Error: When using --print, --output-format=stream-json requires --verbose")
        reader = claude_talk.Stdin()
        first = claude_talk.first_message(reader)
        talking = (reader, first)
        stdin = claude_talk.text_of(first)
        images = claude_talk.images_of(first)
    else:
        stdin = script.read_stdin()
        images = []
    prompt = opts["prompt"] if opts["prompt"] is not None else stdin
    if not prompt.strip():
        script.fail(
            "Error: Input must be provided either through stdin"
            " or as a prompt argument when using --print"
        )

    with script.scenario_state() as (turns, state):
        state.calls += 1
        index, turn = script.pick_turn(CLI, prompt, turns, state)
        session = opts.get("--resume")
        if session is not None and session not in state.sessions:
            script.log_call(CLI, {"turn": index, "stdin": stdin, "error": "unknown session"})
            script.fail(f"No conversation found with session ID: {session}")
        session = session or turn.get("session_id") or script.new_session_id()
        state.sessions.setdefault(session, {})

    # A turn that hangs before its output still hears an interrupt when it talks.
    waits = talking is not None and turn.get("hang") == "before_output"
    script.begin_turn(
        CLI,
        {**turn, "hang": None} if waits else turn,
        writable=can_write(opts),
        record={"turn": index, "stdin": stdin, "session": session, "images": images},
        tools=mcp_calls.server_of_claude(opts.get("--mcp-config")),
    )
    answer = "\n\n".join(script.answers(turn))
    if turn.get("huge_output_bytes"):
        answer = "x" * int(turn["huge_output_bytes"]) + answer
    max_turns = opts.get("--max-turns")
    if max_turns is not None and int(turn.get("num_turns", 3)) > int(max_turns):
        # As the real CLI ends: is_error, the reason in errors[], no result, exit 1.
        turn = {
            **turn,
            "subtype": "error_max_turns",
            "num_turns": int(max_turns) + 1,
            "errors": [f"Reached maximum number of turns ({max_turns})"],
            "exit_code": 1,
        }
    if opts.get("--output-format", "text") == "text":
        print(answer)
        script.finish(turn)
    result = result_object(turn, session, answer)
    init = {
        "type": "system",
        "subtype": "init",
        "cwd": os.getcwd(),
        "session_id": session,
        "tools": ["Bash", "Read", "Edit", "Write"],
        "model": turn.get("model", "claude-sonnet-4-5-20250929"),
        "permissionMode": opts.get("--permission-mode", "default"),
    }
    assistant = {
        "type": "assistant",
        "session_id": session,
        "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]},
    }
    if talking is not None:
        events = {"init": init, "assistant": assistant, "result": result}
        replay = bool(opts.get("--replay-user-messages"))
        talk = claude_talk.Talk(talking[0], turn, session, replay, events)
        talk.run(talking[1], hang=waits)
    if opts.get("--output-format") == "stream-json":
        if not opts.get("--verbose"):
            script.fail("Error: When using --print, --output-format=stream-json requires --verbose")
        # One event per line as the work goes on, the result last.
        script.emit(json.dumps(init))
        for step in script.steps(turn):
            tool = ("Bash", {"command": step["command"]}) if "command" in step else None
            tool = tool or ("Edit", {"file_path": step["file"]})
            use = {"type": "tool_use", "id": "toolu_1", "name": tool[0], "input": tool[1]}
            script.emit(
                json.dumps({**assistant, "message": {"role": "assistant", "content": [use]}})
            )
        script.emit(json.dumps(assistant))
        script.emit(json.dumps(result))
    elif turn.get("array_output") or opts.get("--verbose"):
        script.emit(json.dumps([init, assistant, result]))
    else:
        script.emit(json.dumps(result))
    script.finish(turn)


if __name__ == "__main__":
    main()
