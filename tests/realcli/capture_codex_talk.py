"""Capture what the pinned codex says over `codex app-server`, for the unit tests.

    PYTHONPATH=. .venv/bin/python -m tests.realcli.capture_codex_talk [OUT_DIR]

Runs each scenario below through the real CLI (tests/realcli/install.py puts it in
.agent-clis/) and the bot's own driver (runners/runtimes/codex_talk.py) against the
scripted Responses provider, and writes one JSONL file per scenario to OUT_DIR
(default tests/runners/data/codex_app_server/): every line as `{"from": "bot"|"codex",
"message": ...}` in the order the driver saw them. tests/runners/test_codex_talk.py
replays them. Run it again for a new pin and see what the unit tests say.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from runners.pipe import Pipe
from runners.process import ProcessLimits, run_process
from runners.runtimes import ApprovalAsked, Conversation, Decision, Mode, codex, codex_talk
from runners.runtimes import codex_wire as wire
from runners.runtimes.progress import StepReader
from runners.runtimes.run import _read_secret
from tests.pipeline.harness import make_repo
from tests.realcli import install
from tests.realcli.clis.codex import CLI
from tests.realcli.harness import child_env, run_request
from tests.realcli.openai_responses import Escalate, Patch, ResponsesModel
from tests.realcli.providers import Say, Seen, Shell

OUT = Path(__file__).resolve().parents[1] / "runners" / "data" / "codex_app_server"
LIMITS = ProcessLimits(timeout=60, idle_timeout=60, kill_grace=1.0)


class Recording:
    """A `Pipe` in between: what the driver sends and reads, written down in order."""

    def __init__(self, pipe: Pipe, log: list[dict[str, Any]]) -> None:
        self._pipe = pipe
        self._log = log
        self.lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._copy = asyncio.ensure_future(self._copying())

    async def _copying(self) -> None:
        while True:
            line = await self._pipe.lines.get()
            if line is not None:
                try:
                    self._log.append({"from": "codex", "message": json.loads(line)})
                except ValueError:
                    self._log.append({"from": "codex", "text": line.decode(errors="replace")})
            await self.lines.put(line)
            if line is None:
                return

    async def send(self, line: str) -> None:
        self._log.append({"from": "bot", "message": json.loads(line)})
        await self._pipe.send(line)

    def waiting_on_people(self):
        return self._pipe.waiting_on_people()

    def close(self) -> None:
        self._pipe.close()


def heard(seen: Seen) -> Say:
    results = seen.tool_results[-1:] or ["no tool result"]
    return Say(f"heard: {' | '.join(seen.user_texts)} || {results[0]}")


async def capture(
    root: Path,
    name: str,
    turns: list[Any],
    *,
    prompt: str = "Do the task.",
    decide: Callable[[ApprovalAsked], Decision] | None = None,
    during: Callable[[Conversation, str], None] | None = None,
    resume: str = "",
    key: str | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """One run of the real codex with the bot's driver; returns (log, session id)."""
    model = ResponsesModel(key or CLI.key)
    await model.start()
    model.script(*turns)
    try:
        folder = root / name
        folder.mkdir()
        repo = make_repo(folder, {})
        bins = {"codex": install.binary("codex")}
        request = run_request(
            "codex",
            bins,
            model,
            folder,
            repo,
            prompt,
            mode=Mode.WORKSPACE_WRITE,
            reasoning_effort="high",
            resume_session_id=resume,
        )
        if resume:
            # In the first run's folder (its session is in the home every run shares).
            request = replace(request, cwd=root / "first" / "repo")
        invocation = codex.build_talk_argv(request)
        secrets = {
            name: _read_secret(name, path) for name, path in invocation.secret_env_files.items()
        }

        async def answer(asked: ApprovalAsked) -> Decision:
            assert decide is not None
            return decide(asked)

        conversation = Conversation(answer)
        log: list[dict[str, Any]] = []

        async def converse(pipe: Pipe) -> None:
            await codex_talk.converse(Recording(pipe, log), request, conversation)

        steps = (
            StepReader(wire.step_of, lambda step: during(conversation, step)) if during else None
        )

        env = child_env(root / "home")
        await run_process(
            invocation.argv,
            cwd=invocation.cwd,
            base_env=env,
            extra_env=secrets,
            limits=LIMITS,
            converse=converse,
            on_output=steps.feed if steps else None,
        )
        session = next(
            (
                entry["message"]["result"]["thread"]["id"]
                for entry in log
                if entry.get("message", {}).get("id") == "thread" and "result" in entry["message"]
            ),
            "",
        )
        return log, session
    finally:
        await model.stop()


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="codex-talk-capture-"))
    runs: dict[str, list[dict[str, Any]]] = {}
    runs["plain"], first = await capture(
        root, "first", [Shell("echo built > built.txt"), Say("Built it.")], prompt="Build it."
    )

    def steer(conversation: Conversation, step: str) -> None:
        if step == "ran: sleep 2":
            conversation.steer("Use tabs, not spaces.", "steer-1")

    runs["steer"], _ = await capture(root, "steer", [Shell("sleep 2"), heard], during=steer)
    escalate = Escalate("echo escalated-output", "It runs outside the sandbox.")
    runs["approval_accept"], _ = await capture(
        root, "accept", [escalate, heard], decide=lambda asked: Decision(True)
    )
    runs["approval_decline"], _ = await capture(
        root,
        "decline",
        [escalate, heard],
        decide=lambda asked: Decision(False, "no network please"),
    )
    # Outside every root the sandbox may write (the workspace, /tmp): codex asks. Declined,
    # so it is never written.
    outside = Path("/var/tmp/intent-board-capture/outside-the-workspace.txt")
    runs["file_change"], _ = await capture(
        root,
        "patch",
        [Patch("notes.txt", "inside\n"), Patch(str(outside), "hello\n"), heard],
        decide=lambda asked: Decision(False),
    )

    def interrupt(conversation: Conversation, step: str) -> None:
        if step == "ran: sleep 30":
            conversation.interrupt()

    runs["interrupt"], _ = await capture(
        root, "interrupt", [Shell("sleep 30")], during=interrupt, prompt="Sleep first."
    )
    runs["resume"], _ = await capture(
        root, "resume", [Say("Going on.")], prompt="Go on, please.", resume=first
    )
    runs["resume_unknown"], _ = await capture(
        root, "unknown", [], resume="01a22fc5-0000-7000-8000-000000000000"
    )
    runs["turn_failed"], _ = await capture(root, "failed", [Say("never")], key="not-the-key")
    for name, log in runs.items():
        text = "".join(json.dumps(entry) + "\n" for entry in log)
        (out / f"{name}.jsonl").write_text(text.replace(str(root), "/captured"))
    print(f"captured {len(runs)} runs into {out}", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
