"""Scripted `codex`: the real CLI's options for `exec --json`, answers from a scenario.

Accepts  codex [ROOT OPTIONS] exec [EXEC OPTIONS] [resume SESSION_ID] [PROMPT|-]
and prints `codex exec --json` JSONL events; and  codex [-c K=V]... app-server [-c K=V]...
which speaks JSON-RPC on stdio (codex_app_server.py). Scenarios: tests/bin/README.md.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from runners.scripted import agent as script
from runners.scripted import codex_app_server, mcp_calls

CLI = "codex"
USAGE = "codex exec [OPTIONS] [PROMPT]\n       codex exec [OPTIONS] <COMMAND> [ARGS]"
CHOICES = {
    "--ask-for-approval": {"untrusted", "on-failure", "on-request", "never"},
    "--sandbox": {"read-only", "workspace-write", "danger-full-access"},
    "--color": {"always", "never", "auto"},
}
ALIASES = {
    "-a": "--ask-for-approval",
    "-s": "--sandbox",
    "-m": "--model",
    "-C": "--cd",
    "-c": "--config",
    "-p": "--profile",
    "-o": "--output-last-message",
    "-i": "--image",
}
ROOT_VALUE = {"--ask-for-approval", "--sandbox", "--model", "--cd", "--config", "--profile"}
EXEC_VALUE = {
    "--sandbox",
    "--model",
    "--cd",
    "--config",
    "--profile",
    "--color",
    "--output-last-message",
    "--output-schema",
    "--image",
}
EXEC_FLAGS = {
    "--json",
    "--experimental-json",
    "--ignore-user-config",
    "--ignore-rules",
    "--skip-git-repo-check",
    "--ephemeral",
}


def parse(argv: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "config": {},
        "exec": False,
        "app_server": False,
        "resume": None,
        "prompt": None,
    }
    stage = "root"
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, _, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        name = ALIASES.get(name, name)
        takes_value = name in (ROOT_VALUE if stage == "root" else EXEC_VALUE)
        if stage == "app-server" and name != "--config":
            raise script.UsageError(f"unexpected argument '{arg}' found")
        if stage in ("root", "exec", "app-server") and arg.startswith("-") and arg != "-":
            if takes_value:
                if inline:
                    value = inline
                elif i + 1 < len(argv):
                    i += 1
                    value = argv[i]
                else:
                    raise script.UsageError(
                        f"a value is required for '{name} <VALUE>' but none was supplied"
                    )
                if name in CHOICES and value not in CHOICES[name]:
                    raise script.UsageError(f"invalid value '{value}' for '{name} <MODE>'")
                if name == "--config":
                    key, sep, raw = value.partition("=")
                    if not sep or not key.strip():
                        raise script.UsageError(
                            f"invalid value '{value}' for '--config <key=value>'"
                        )
                    try:
                        opts["config"][key.strip()] = json.loads(raw)
                    except ValueError:
                        opts["config"][key.strip()] = raw
                elif name == "--image":
                    # Repeatable; the real one also splits a value at commas.
                    opts.setdefault("images", []).extend(value.split(","))
                else:
                    opts[name] = value
            elif stage == "exec" and name in EXEC_FLAGS:
                opts[name] = True
            else:
                raise script.UsageError(f"unexpected argument '{arg}' found")
        elif stage == "root":
            if arg == "app-server":
                stage, opts["app_server"] = "app-server", True
            elif arg != "exec":
                raise script.UsageError(
                    f"unrecognized subcommand '{arg}' (the fake knows exec and app-server)"
                )
            else:
                stage, opts["exec"] = "exec", True
        elif stage == "app-server":
            raise script.UsageError(f"unexpected argument '{arg}' found")
        elif stage == "exec" and arg == "resume" and opts["resume"] is None:
            if i + 1 >= len(argv) or argv[i + 1].startswith("-") and argv[i + 1] != "-":
                raise script.UsageError("resume needs a SESSION_ID (the fake does not do --last)")
            i += 1
            opts["resume"] = argv[i]
        elif opts["prompt"] is None:
            opts["prompt"] = arg
            stage = "done"
        else:
            raise script.UsageError(f"unexpected argument '{arg}' found")
        i += 1
    if not opts["exec"] and not opts["app_server"]:
        raise script.UsageError("the fake codex only implements 'exec' and 'app-server'")
    return opts


# Providers codex knows by itself; any other `model_provider` must be defined with -c.
BUILTIN_PROVIDERS = {"openai", "oss", "ollama", "lmstudio"}


def check_provider(config: dict[str, Any], json_output: bool) -> None:
    """A custom provider as the real codex checks it: a name and a base_url, and the
    variable its `env_key` names set (else the turn fails, on stdout, with exit 1)."""
    provider = config.get("model_provider")
    if provider is None or provider in BUILTIN_PROVIDERS:
        return
    prefix = f"model_providers.{provider}."
    if not config.get(prefix + "name"):
        script.fail(
            f"Error loading config.toml: model_providers.{provider}: "
            "provider name must not be empty"
        )
    if not config.get(prefix + "base_url"):
        script.fail(f"Error: model provider `{provider}` not found")
    env_key = config.get(prefix + "env_key")
    if env_key and not os.environ.get(env_key):
        message = f"Missing environment variable: `{env_key}`."
        if not json_output:
            script.fail(f"Error: {message}")
        script.emit(event("thread.started", thread_id=script.new_session_id()))
        script.emit(event("turn.started"))
        script.emit(event("error", message=message))
        script.emit(event("turn.failed", error={"message": message}))
        sys.exit(1)


def event(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields})


def main() -> None:
    if sys.argv[1:] in (["--version"], ["-V"]):
        print(f"codex-cli {script.tested_version(CLI)}")
        sys.exit(0)
    try:
        opts = parse(sys.argv[1:])
    except script.UsageError as error:
        # clap's words and exit status
        said = f"error: {error}\n\nUsage: {USAGE}\n\nFor more information, try '--help'.\n"
        script.usage_exit(CLI, str(error), said, 2)
    if opts["app_server"]:
        codex_app_server.main(opts["config"])
        sys.exit(0)
    if "--cd" in opts:
        if not Path(opts["--cd"]).is_dir():
            script.fail(f"Error: No such file or directory (os error 2): {opts['--cd']}")
        os.chdir(opts["--cd"])
    prompt = opts["prompt"]
    stdin = script.read_stdin()
    if prompt in (None, "-"):
        prompt = stdin
    if not prompt.strip():
        script.fail(
            "No prompt provided. Either specify one as an argument or pipe the prompt into stdin."
        )
    if not opts.get("--skip-git-repo-check") and not script.in_git_repository(Path.cwd()):
        script.fail("Not inside a trusted directory and --skip-git-repo-check was not specified.")
    config = opts["config"]
    check_provider(config, bool(opts.get("--json") or opts.get("--experimental-json")))

    with script.scenario_state() as (turns, state):
        state.calls += 1
        index, turn = script.pick_turn(CLI, prompt, turns, state)
        session = opts["resume"]
        if session is not None and session not in state.sessions:
            script.log_call(CLI, {"turn": index, "stdin": stdin, "error": "unknown session"})
            script.fail(
                f"Error: thread/resume: thread/resume failed: no rollout found for thread id "
                f"{session} (code -32600)"
            )
        session = session or turn.get("session_id") or script.new_session_id()
        previous = state.sessions.get(session, {})
        usage = turn.get("usage") or {
            "input_tokens": 100,
            "cached_input_tokens": 20,
            "output_tokens": 10,
        }
        cumulative = {
            key: previous.get(key, 0) + int(usage.get(key, 0))
            for key in ("input_tokens", "cached_input_tokens", "output_tokens")
        }
        state.sessions[session] = cumulative

    written, denied = script.begin_turn(
        CLI,
        turn,
        writable=opts.get("--sandbox") in ("workspace-write", "danger-full-access"),
        record={
            "turn": index,
            "stdin": stdin,
            "session": session,
            "config": config,
            "images": opts.get("images", []),
        },
        tools=mcp_calls.server_of_codex(config),
    )
    if not opts.get("--json") and not opts.get("--experimental-json"):
        print("\n\n".join(script.answers(turn)))
        script.finish(turn)

    item_key = "item_type" if turn.get("legacy_items") else "type"
    message_type = "assistant_message" if turn.get("legacy_items") else "agent_message"
    script.emit(event("thread.started", thread_id=session))
    script.emit(event("turn.started"))
    for message in turn.get("error_events") or ():
        script.emit(event("error", message=message))
    if turn.get("huge_output_bytes"):
        text = "x" * int(turn["huge_output_bytes"])
        script.emit(
            event("item.completed", item={"id": "item_huge", item_key: message_type, "text": text})
        )
    if turn.get("damaged_line") == "before_answer":
        script.emit('{"type":"item.completed","item":{"id":"item_9","type":"agent_mess')
    script.emit(
        event(
            "item.completed",
            item={"id": "item_0", item_key: "reasoning", "text": "**Reading the task**"},
        )
    )
    for number, step in enumerate(script.steps(turn)):
        if "command" in step:
            item: dict[str, Any] = {"id": f"cmd_{number}", item_key: "command_execution"}
            item |= {"command": step["command"], "status": "in_progress"}
            script.emit(event("item.started", item=item))
        else:
            change = {"path": step["file"], "kind": "update"}
            item = {"id": f"file_{number}", item_key: "file_change", "changes": [change]}
            script.emit(event("item.completed", item={**item, "status": "completed"}))
    if written or denied:
        changes = [{"path": name, "kind": "add"} for name in written + denied]
        status = "completed" if written else "failed"
        script.emit(
            event(
                "item.completed",
                item={
                    "id": "item_1",
                    item_key: "file_change",
                    "changes": changes,
                    "status": status,
                },
            )
        )
    for number, text in enumerate(script.answers(turn), start=2):
        if text:
            script.emit(
                event(
                    "item.completed",
                    item={"id": f"item_{number}", item_key: message_type, "text": text},
                )
            )
    if turn.get("damaged_line") == "after_answer":
        script.emit('{"type":"turn.compl')
    if turn.get("hang") == "after_output":
        script.finish(turn)
    if turn.get("turn_failed"):
        script.emit(event("turn.failed", error={"message": turn["turn_failed"]}))
    elif turn.get("damaged_line") != "after_answer":
        # The real event also counts cache writes and reasoning; the fake has neither.
        usage = {**cumulative, "cache_write_input_tokens": 0, "reasoning_output_tokens": 0}
        script.emit(event("turn.completed", usage=usage))
    script.finish(turn)


if __name__ == "__main__":
    main()
