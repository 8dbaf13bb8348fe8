"""Gemini CLI in the real-CLI tests: the Gemini API (tests/realcli/gemini_api.py), its
headless default mode for the read-only roles, a policy file for the reviewer's git reads.

Gemini CLI sends no session id with an API key; the sessions it used are the ones it
keeps under the home the bot gave it (`.gemini/tmp/<project>/chats/*.jsonl`, whose first
line names the session).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.realcli.gemini_api import GeminiModel
from tests.realcli.providers import ScriptedModel, TestedCli


def kept_sessions(model: ScriptedModel, home: Path) -> set[str | None]:
    del model
    found: set[str | None] = set()
    # Every line's: a resumed session may be kept in a file of its own whose first line
    # is not the one naming it, and the last line may still be being written.
    for chat in home.glob(".gemini/tmp/*/chats/*.jsonl"):
        for line in chat.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("sessionId"):
                found.add(record["sessionId"])
    return found


CLI = TestedCli(
    runtime="gemini",
    provider=GeminiModel,
    key="gemini-loopback-key-3d2b",
    # Names 0.61.0 sends unchanged (it rewrites aliases and some older names).
    models=("gemini-2.5-flash", "gemini-2.5-pro"),
    # Configured, and not passed: the run records none (its record takes no effort).
    effort="low",
    # A read-only run is offered no tool that writes (nor a shell, without grants).
    write_tools=frozenset({"write_file", "replace"}),
    refused_write='Tool "write_file" not found',
    refused_shell='Tool "run_shell_command" not found',
    # The policy's deny rules, or the headless refusal of anything it does not allow.
    refused_with_grants=("denied by policy", "requires user confirmation"),
    unknown_session="Invalid session identifier",
    turn_limit="Reached max session turns",
    reports_model=True,
    sessions=kept_sessions,
)
