"""Capture the transcripts of tests/runners/data/claude_talk/ from the real Claude Code.

    .venv/bin/python -m tests.realcli.capture_claude_talk [FOLDER]

Each scenario runs the pinned `claude` through our driver (runners.runtimes.claude_talk)
against the scripted Messages provider, and writes `<scenario>.jsonl`: one record a
line, in the order the driver saw them, `{"out": LINE}` (the CLI printed it), `{"in":
LINE}` (the driver wrote it), `{"bot": "steer", "key", "text"}` / `{"bot": "interrupt"}`
(the bot's side acted) and `{"asked": {...}, "decision": {...}}` (an approval and the
bot's answer). The unit tests replay them without the CLI (tests/runners/test_claude_talk.py).
Run it again when the pin moves, and read the differences.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from runners.process import ProcessLimits, run_process
from runners.runtimes import ApprovalAsked, Conversation, Decision, Mode, claude
from runners.runtimes.claude_talk import converse
from tests.pipeline.harness import make_repo
from tests.realcli import install
from tests.realcli.anthropic_messages import MessagesModel
from tests.realcli.clis import CLIS
from tests.realcli.harness import child_env, run_request
from tests.realcli.providers import Say, Seen, Shell, WriteFile

DATA = Path(__file__).resolve().parents[1] / "runners" / "data" / "claude_talk"
LIMITS = ProcessLimits(timeout=60, idle_timeout=60, kill_grace=1.0)


class Recorder:
    """The pipe the driver talks through, noting every line both ways."""

    def __init__(self, pipe: Any, records: list[dict[str, Any]]) -> None:
        self.pipe = pipe
        self.records = records
        self.lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.tap = asyncio.ensure_future(self._copy())

    async def _copy(self) -> None:
        while True:
            line = await self.pipe.lines.get()
            if line is not None:
                self.records.append({"out": line.decode()})
            self.lines.put_nowait(line)
            if line is None:
                return

    async def send(self, line: str) -> None:
        self.records.append({"in": line})
        await self.pipe.send(line)

    def close(self) -> None:
        self.pipe.close()

    def waiting_on_people(self):
        return self.pipe.waiting_on_people()


class Scenario:
    def __init__(self, name: str, prompt: str, *turns: Any, **fields: Any) -> None:
        self.name = name
        self.prompt = prompt
        self.turns = turns
        self.fields = fields
        self.records: list[dict[str, Any]] = []
        self.answers: list[Decision] = []
        self.conversation = Conversation(self._decide)
        self.on_asked: Callable[[], None] | None = None
        self.hold = asyncio.Event()

    async def _decide(self, asked: ApprovalAsked) -> Decision:
        if self.on_asked is not None:
            self.on_asked()
            await self.hold.wait()  # answered never: the interrupt withdraws the question
        decision = self.answers.pop(0)
        self.records.append({"asked": asdict(asked), "decision": asdict(decision)})
        return decision

    def steer(self, text: str, key: str) -> None:
        self.records.append({"bot": "steer", "key": key, "text": text})
        self.conversation.steer(text, key)

    def interrupt(self) -> None:
        self.records.append({"bot": "interrupt"})
        self.conversation.interrupt()


async def capture(scenario: Scenario, root: Path, bins: dict[str, Path]) -> None:
    model = MessagesModel(CLIS["claude"].key)
    await model.start()
    try:
        model.script(*scenario.turns)
        repo = make_repo(root, {})
        fields = {"mode": Mode.WORKSPACE_WRITE, **scenario.fields}
        request = run_request("claude", bins, model, root, repo, scenario.prompt, **fields)
        invocation = claude.talk_argv(request)
        env = {**child_env(root / "home"), **invocation.env_extras}
        env["ANTHROPIC_API_KEY"] = CLIS["claude"].key

        async def talk(pipe: Any) -> None:
            await converse(Recorder(pipe, scenario.records), request, scenario.conversation)

        done = await run_process(
            invocation.argv, cwd=repo, base_env=env, limits=LIMITS, converse=talk
        )
        print(f"{scenario.name}: {done.outcome.value}, {len(scenario.records)} records")
    finally:
        await model.stop()


def scenarios() -> list[Scenario]:
    plain = Scenario("plain", "Write notes.", WriteFile("notes.txt", "one\n"), Say("Wrote them."))

    in_turn = Scenario("steer_in_turn", "Indent the file.")

    def steer_while_sleeping(seen: Seen) -> Shell:
        asyncio.get_running_loop().call_later(0.5, in_turn.steer, "Use tabs.", "steer-1")
        return Shell("sleep 2")

    in_turn.turns = (steer_while_sleeping, Say("Done, with tabs."))

    new_turn = Scenario("steer_new_turn", "Do it.")

    async def slow(seen: Seen) -> Say:
        new_turn.steer("Also a changelog line.", "steer-2")
        await asyncio.sleep(1.0)
        return Say("First answer.")

    new_turn.turns = (slow, Say("Second answer."))

    command = "python3 -c \"open('allowed.txt', 'w').write('yes'); print(6 * 7)\""
    allow = Scenario("approval_allow", "Compute.", Shell(command), Say("It printed 42."))
    allow.answers = [Decision(True)]
    denied = "python3 -c \"open('denied.txt', 'w')\""
    deny = Scenario("approval_deny", "Fetch it.", Shell(denied), Say("Understood."))
    deny.answers = [Decision(False, "no network please")]

    interrupt = Scenario("interrupt", "Start the long job.")

    def long_job(seen: Seen) -> Shell:
        def stop() -> None:
            interrupt.steer("Never mind that.", "steer-late")
            interrupt.interrupt()

        asyncio.get_running_loop().call_later(1.0, stop)
        return Shell("echo started; sleep 37")

    interrupt.turns = (long_job, Say("unused"))

    waiting = Scenario("interrupt_while_asking", "Compute.", Shell(command), Say("unused"))
    waiting.on_asked = waiting.interrupt

    bound = Scenario(
        "max_turns", "Work.", Shell("echo one"), Shell("echo two"), Say("unused"), max_turns=2
    )
    reader = Scenario("read_only", "Look.", Shell(denied), Say("Could not."), mode=Mode.READ_ONLY)
    return [plain, in_turn, new_turn, allow, deny, interrupt, waiting, bound, reader]


async def main(folder: Path) -> None:
    bins = {command: install.binary(command) for command in ("claude",)}
    folder.mkdir(parents=True, exist_ok=True)
    for scenario in scenarios():
        with tempfile.TemporaryDirectory() as root:
            await capture(scenario, Path(root), bins)
        lines = [json.dumps(record, ensure_ascii=False) for record in scenario.records]
        (folder / f"{scenario.name}.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DATA))
