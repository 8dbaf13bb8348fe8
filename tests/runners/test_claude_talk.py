"""Claude Code's interactive protocol without the CLI: the command line, the parser and the
driver, on transcripts captured from the pinned Claude Code 2.1.332 against the scripted
Messages provider (tests/runners/data/claude_talk/, made by tests/realcli/
capture_claude_talk.py). A replay plays the CLI's side of a transcript line by line and
checks that the driver writes what it wrote then; the real CLI is in
tests/realcli/test_talk_claude_real.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runners.runtimes import (
    ApprovalAsked,
    Conversation,
    Decision,
    Delivered,
    InvalidRequest,
    Mode,
    Refused,
    RunRequest,
    Taken,
    Told,
    Usage,
    claude,
)
from runners.runtimes.claude_talk import FINISHED, INTERRUPTED, NOT_ASKED, converse

DATA = Path(__file__).parent / "data" / "claude_talk"
WAIT = 5.0


def transcript(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines()]


def stdout_of(name: str) -> str:
    return "\n".join(record["out"] for record in transcript(name) if "out" in record) + "\n"


def cli_events(name: str) -> list[dict[str, Any]]:
    return [json.loads(record["out"]) for record in transcript(name) if "out" in record]


def kind(record: dict[str, Any]) -> str | None:
    """What the CLI printed in an `out` record: its type, "replay" for an echoed message."""
    if "out" not in record:
        return None
    event = json.loads(record["out"])
    return "replay" if event.get("isReplay") else event.get("type")


def answers_our_interrupt(line: str) -> bool:
    event = json.loads(line)
    return event.get("type") == "control_response" and (
        event["response"].get("request_id") == "bot-interrupt"
    )


def captured_cwd(name: str) -> Path:
    init = next(e for e in cli_events(name) if e.get("subtype") == "init")
    return Path(init["cwd"])


class ScriptedPipe:
    """The CLI's end of the conversation (runners.process.Pipe's interface), played by
    the test: it puts the CLI's lines in, reads what the driver wrote."""

    def __init__(self) -> None:
        self.lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.written: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.waiting = 0

    async def send(self, line: str) -> None:
        self.written.put_nowait(json.loads(line))

    def close(self) -> None:
        pass

    @contextlib.contextmanager
    def waiting_on_people(self) -> Iterator[None]:
        self.waiting += 1
        try:
            yield
        finally:
            self.waiting -= 1

    async def next_written(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.written.get(), WAIT)


class Owner:
    """The bot's side: the answers it gives, what it was asked and told."""

    def __init__(self, pipe: ScriptedPipe, *answers: Decision, hold: bool = False) -> None:
        self.pipe = pipe
        self.answers = list(answers)
        self.hold = hold
        self.asked: list[ApprovalAsked] = []
        self.waiting_while_asked: list[int] = []
        self.withdrawn = 0
        self.told: list[Told] = []
        self.conversation = Conversation(self._decide, self.told.append)

    async def _decide(self, asked: ApprovalAsked) -> Decision:
        self.asked.append(asked)
        self.waiting_while_asked.append(self.pipe.waiting)
        if self.hold:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.withdrawn += 1
                raise
        return self.answers.pop(0)


def request_for(name: str, mode: Mode = Mode.WORKSPACE_WRITE, prompt: str = "") -> RunRequest:
    first = json.loads(next(r["in"] for r in transcript(name) if "in" in r))
    return RunRequest(
        binary="claude",
        cwd=captured_cwd(name),
        prompt=prompt or first["message"]["content"],
        mode=mode,
    )


async def replay(
    name: str, owner: Owner, request: RunRequest, *, finish: bool = True
) -> asyncio.Future[None]:
    """Play the CLI's side of a transcript against the driver; every line the driver
    writes must be the one it wrote to the real CLI (our uuids mapped to today's)."""
    pipe = owner.pipe
    driver = asyncio.ensure_future(converse(pipe, request, owner.conversation))
    stamps: dict[str, str] = {}
    for record in transcript(name):
        if "in" in record:
            written = await pipe.next_written()
            expected = json.loads(record["in"])
            if "uuid" in expected:
                stamps[expected["uuid"]] = written["uuid"]
                expected["uuid"] = written["uuid"]
            assert written == expected
        elif "out" in record:
            line = record["out"]
            for captured, today in stamps.items():
                line = line.replace(captured, today)
            pipe.lines.put_nowait(line.encode())
        elif record.get("bot") == "steer":
            owner.conversation.steer(record["text"], record["key"])
        elif record.get("bot") == "interrupt":
            owner.conversation.interrupt()
    if finish:
        await asyncio.wait_for(asyncio.shield(driver), WAIT)
    return driver


def decisions(name: str) -> list[Decision]:
    return [Decision(**record["decision"]) for record in transcript(name) if "decision" in record]


def questions(name: str) -> list[ApprovalAsked]:
    return [ApprovalAsked(**record["asked"]) for record in transcript(name) if "asked" in record]


# --- the command line -------------------------------------------------------------


def test_the_interactive_command_line_is_the_one_shot_one_plus_the_protocol(
    tmp_path: Path,
) -> None:
    request = RunRequest(
        binary="claude",
        cwd=tmp_path,
        prompt="Build it.",
        mode=Mode.WORKSPACE_WRITE,
        model="claude-sonnet-4-5",
        reasoning_effort="high",
        max_turns=8,
        resume_session_id="41b8225d-2631-421f-9483-2d9d62c0a279",
        base_url="http://127.0.0.1:9/",
        api_key_file=tmp_path / "key",
    )
    once = claude.build_argv(request)
    talking = claude.talk_argv(request)
    argv = list(talking.argv)
    protocol = [
        "--input-format",
        "stream-json",
        "--replay-user-messages",
        "--permission-prompt-tool",
        "stdio",
    ]
    assert argv[1:7] == ["-p", *protocol]
    assert [argv[0], *argv[7:]] == [once.argv[0], *once.argv[2:]]
    # The prompt goes over the protocol, not as stdin text.
    assert talking.stdin == "" and once.stdin == "Build it."
    assert talking.env_extras == once.env_extras
    assert talking.secret_env_files == once.secret_env_files


def test_a_read_only_interactive_run_has_nobody_to_ask(tmp_path: Path) -> None:
    request = RunRequest(binary="claude", cwd=tmp_path, prompt="Look.", mode=Mode.READ_ONLY)
    argv = claude.talk_argv(request).argv
    assert "--permission-prompt-tool" not in argv
    assert argv[argv.index("--permission-mode") + 1] == "dontAsk"
    assert "--disallowedTools" in argv


# --- the parser ---------------------------------------------------------------------


def test_one_turn_reads_as_the_one_shot_parser_reads_it() -> None:
    out = claude.parse_talk(stdout_of("plain"))
    assert out.ok and not out.interrupted
    assert out.answer == "Wrote them."
    assert out == claude.parse_output(stdout_of("plain"))
    assert out.usage == Usage(200, 40, 20)
    assert out.turns == 2
    assert out.session_id == cli_events("plain")[-1]["session_id"]


def test_turns_a_steer_started_add_up_and_the_last_answer_counts() -> None:
    results = [e for e in cli_events("steer_new_turn") if e.get("type") == "result"]
    assert [r["result"] for r in results] == ["First answer.", "Second answer."]
    out = claude.parse_talk(stdout_of("steer_new_turn"))
    assert out.ok
    assert out.answer == "Second answer."
    # Each result counts its own turn's usage and turns...
    assert [r["usage"]["input_tokens"] for r in results] == [80, 80]
    assert out.usage == Usage(200, 40, 20)
    assert out.turns == sum(r["num_turns"] for r in results) == 2
    assert out.duration_ms == sum(r["duration_ms"] for r in results)
    # ...and the cost the process's so far.
    assert results[1]["total_cost_usd"] == pytest.approx(2 * results[0]["total_cost_usd"])
    assert out.cost_usd == results[1]["total_cost_usd"]
    # The one-shot parser would have reported the last turn's usage only.
    assert claude.parse_output(stdout_of("steer_new_turn")).usage == Usage(100, 20, 10)


@pytest.mark.parametrize("name", ["interrupt", "interrupt_while_asking"])
def test_a_turn_the_bot_interrupted_is_no_failure(name: str) -> None:
    result = next(e for e in cli_events(name) if e.get("type") == "result")
    assert result["subtype"] == "error_during_execution" and result["is_error"] is True
    out = claude.parse_talk(stdout_of(name))
    assert out.interrupted
    assert out.failure is None and out.answer == ""
    assert out.session_id == result["session_id"]
    assert out.usage == Usage(100, 20, 10)


def test_an_execution_error_nobody_asked_for_stays_a_failure() -> None:
    # The interrupt transcript without the CLI's answer to our interrupt.
    lines = [
        line for line in stdout_of("interrupt").splitlines() if not answers_our_interrupt(line)
    ]
    out = claude.parse_talk("\n".join(lines))
    assert not out.interrupted
    assert out.failure and "error_during_execution" in out.failure


def test_an_interrupt_answered_in_an_earlier_turn_does_not_excuse_a_later_failure() -> None:
    first, second = stdout_of("interrupt"), stdout_of("interrupt")
    without_receipt = "\n".join(
        line for line in second.splitlines() if not answers_our_interrupt(line)
    )
    out = claude.parse_talk(first + without_receipt)
    assert not out.interrupted and out.failure


def test_the_turn_bound_ends_an_interactive_run_as_a_one_shot_one() -> None:
    out = claude.parse_talk(stdout_of("max_turns"))
    assert out.turn_limit_reached
    assert "Reached maximum number of turns (2)" in (out.failure or "")
    assert out == claude.parse_output(stdout_of("max_turns"))


def test_output_without_a_result_fails_as_before() -> None:
    partial = "\n".join(stdout_of("plain").splitlines()[:-3])
    assert claude.parse_talk(partial).failure == "claude output has no result message"
    assert claude.parse_talk("").failure == "claude produced no output"


def test_the_steps_of_an_interactive_run_are_the_one_shot_ones() -> None:
    steps = [claude.RUNTIME.talking.step_of(event) for event in cli_events("approval_allow")]
    assert [step for step in steps if step] == [
        "Bash: python3 -c \"open('allowed.txt', 'w').write('yes'); print(6 * 7)\""
    ]


# --- the driver ---------------------------------------------------------------------


async def test_a_plain_run_sends_the_prompt_and_ends_with_its_result() -> None:
    pipe = ScriptedPipe()
    owner = Owner(pipe)
    await replay("plain", owner, request_for("plain"))
    assert owner.told == [] and owner.asked == []


async def test_a_steer_while_a_command_runs_is_taken_when_the_cli_replays_it() -> None:
    pipe = ScriptedPipe()
    owner = Owner(pipe)
    await replay("steer_in_turn", owner, request_for("steer_in_turn"))
    assert owner.told == [Delivered("steer-1"), Taken("steer-1")]


async def test_a_steer_that_became_a_turn_is_waited_for() -> None:
    # The steer is written while the model answers: the first result comes before its
    # replay. A driver that ended there would refuse it instead of telling it taken.
    records = transcript("steer_new_turn")
    order = [kind(r) for r in records if kind(r) in ("result", "replay")]
    assert order == ["replay", "result", "replay", "result"]
    pipe = ScriptedPipe()
    owner = Owner(pipe)
    await replay("steer_new_turn", owner, request_for("steer_new_turn"))
    assert owner.told == [Delivered("steer-2"), Taken("steer-2")]


@pytest.mark.parametrize("name", ["approval_allow", "approval_deny"])
async def test_an_approval_goes_to_the_bot_and_its_answer_to_the_cli(name: str) -> None:
    pipe = ScriptedPipe()
    owner = Owner(pipe, *decisions(name))
    await replay(name, owner, request_for(name))
    assert owner.asked == questions(name)
    assert owner.asked[0].tool == "Bash"
    assert owner.asked[0].cwd == str(captured_cwd(name))
    # The idle watchdog rests while a person decides.
    assert owner.waiting_while_asked == [1] and pipe.waiting == 0


def test_an_allowed_call_runs_as_asked_and_a_denied_one_carries_the_reason() -> None:
    def answer(name: str) -> dict[str, Any]:
        asked = next(e for e in cli_events(name) if e.get("type") == "control_request")
        sent = [json.loads(r["in"]) for r in transcript(name) if "in" in r]
        reply = next(s for s in sent if s["type"] == "control_response")["response"]
        assert reply["request_id"] == asked["request_id"]
        return {"asked": asked["request"], **reply["response"]}

    allowed = answer("approval_allow")
    assert allowed["behavior"] == "allow"
    assert allowed["updatedInput"] == allowed["asked"]["input"]
    assert allowed["asked"]["permission_suggestions"]  # offered, never taken
    denied = answer("approval_deny")
    assert denied["behavior"] == "deny" and denied["message"] == "no network please"


async def test_an_interrupt_drops_the_steer_not_taken_and_ends_the_run() -> None:
    pipe = ScriptedPipe()
    owner = Owner(pipe)
    await replay("interrupt", owner, request_for("interrupt"))
    assert owner.told == [Delivered("steer-late"), Refused("steer-late", INTERRUPTED)]


async def test_an_interrupt_while_the_bot_decides_withdraws_the_question() -> None:
    pipe = ScriptedPipe()
    owner = Owner(pipe, hold=True)
    await replay("interrupt_while_asking", owner, request_for("interrupt_while_asking"))
    assert len(owner.asked) == 1 and owner.withdrawn == 1
    assert pipe.waiting == 0


async def test_a_read_only_run_denies_a_question_without_asking_the_bot() -> None:
    # dontAsk never asks (read_only transcript); were a question to come, nobody is asked.
    assert not any(e.get("type") == "control_request" for e in cli_events("read_only"))
    pipe = ScriptedPipe()
    owner = Owner(pipe, Decision(True))
    request = request_for("approval_allow", mode=Mode.READ_ONLY)
    driver = asyncio.ensure_future(converse(pipe, request, owner.conversation))
    await pipe.next_written()
    question = next(e for e in cli_events("approval_allow") if e.get("type") == "control_request")
    pipe.lines.put_nowait(json.dumps(question).encode())
    reply = (await pipe.next_written())["response"]
    assert reply["response"] == {"behavior": "deny", "message": NOT_ASKED}
    assert owner.asked == []
    pipe.lines.put_nowait(None)
    await asyncio.wait_for(driver, WAIT)


async def test_lines_that_are_no_protocol_are_skipped() -> None:
    pipe = ScriptedPipe()
    owner = Owner(pipe)
    for junk in (b"not json", b"[1, 2]", b'"text"', b'{"type": "surprise"}', b'{"no": "type"}'):
        pipe.lines.put_nowait(junk)
    for broken in (
        {"type": "control_request"},
        {"type": "control_request", "request_id": 7, "request": {}},
        {"type": "control_response", "response": "x"},
        {"type": "control_cancel_request", "request_id": "nobody"},
        {"type": "user", "isReplay": True, "uuid": "unknown"},
    ):
        pipe.lines.put_nowait(json.dumps(broken).encode())
    await replay("plain", owner, request_for("plain"))
    assert owner.told == []


async def test_a_question_it_cannot_answer_gets_an_error_not_silence() -> None:
    pipe = ScriptedPipe()
    owner = Owner(pipe)
    driver = asyncio.ensure_future(converse(pipe, request_for("plain"), owner.conversation))
    await pipe.next_written()
    hook = {"type": "control_request", "request_id": "h1", "request": {"subtype": "hook_callback"}}
    pipe.lines.put_nowait(json.dumps(hook).encode())
    malformed = {
        "type": "control_request",
        "request_id": "m1",
        "request": {"subtype": "can_use_tool"},
    }
    pipe.lines.put_nowait(json.dumps(malformed).encode())
    first, second = await pipe.next_written(), await pipe.next_written()
    assert first["response"] == {"subtype": "error", "request_id": "h1", "error": "not supported"}
    assert second["response"]["response"]["behavior"] == "deny"
    assert owner.asked == []
    pipe.lines.put_nowait(None)
    await asyncio.wait_for(driver, WAIT)


async def test_steers_after_the_last_result_are_refused_never_sent() -> None:
    pipe = ScriptedPipe()
    owner = Owner(pipe)
    driver = asyncio.ensure_future(converse(pipe, request_for("plain"), owner.conversation))
    await pipe.next_written()
    result = next(r["out"] for r in transcript("plain") if kind(r) == "result")
    # The result and a steer at the same moment: the run is over, the steer is not sent.
    owner.conversation.steer("Same moment.", "same-1")
    pipe.lines.put_nowait(result.encode())
    owner.conversation.steer("Just after.", "after-1")
    await asyncio.wait_for(driver, WAIT)
    assert owner.told == [Refused("same-1", FINISHED), Refused("after-1", FINISHED)]
    assert pipe.written.empty()


async def test_a_cli_that_dies_refuses_the_steers_it_never_took() -> None:
    pipe = ScriptedPipe()
    owner = Owner(pipe)
    driver = asyncio.ensure_future(converse(pipe, request_for("plain"), owner.conversation))
    await pipe.next_written()
    owner.conversation.steer("Are you there?", "lost-1")
    await pipe.next_written()
    pipe.lines.put_nowait(None)
    await asyncio.wait_for(driver, WAIT)
    assert owner.told == [Refused("lost-1", FINISHED)]


# --- handing over -------------------------------------------------------------------


def test_the_hand_over_line_names_the_key_file_never_the_key(tmp_path: Path) -> None:
    key = tmp_path / "my keys" / "claude-key"
    request = RunRequest(
        binary="/opt/claude code/claude",
        cwd=tmp_path / "work tree",
        prompt="p",
        model="claude-sonnet-4-5",
        base_url="http://127.0.0.1:8080/",
        api_key_file=key,
    )
    line = claude.hand_over(request, "41b8225d-2631-421f-9483-2d9d62c0a279")
    assert line == (
        f"cd '{tmp_path}/work tree' && ANTHROPIC_BASE_URL=http://127.0.0.1:8080/ "
        f"ANTHROPIC_API_KEY=\"$(cat '{key}')\" '/opt/claude code/claude' "
        "--model claude-sonnet-4-5 --resume 41b8225d-2631-421f-9483-2d9d62c0a279"
    )
    plain = RunRequest(binary="claude", cwd=tmp_path, prompt="p")
    assert claude.hand_over(plain, "s-1") == f"cd {tmp_path} && claude --resume s-1"
    with pytest.raises(InvalidRequest):
        claude.hand_over(plain, "--dangerously-skip-permissions")
    assert claude.RUNTIME.hand_over is claude.hand_over


async def test_a_steer_after_the_interrupt_is_refused_not_started_as_a_turn() -> None:
    pipe = ScriptedPipe()
    owner = Owner(pipe)
    driver = asyncio.ensure_future(converse(pipe, request_for("interrupt"), owner.conversation))
    await pipe.next_written()
    owner.conversation.interrupt()
    assert (await pipe.next_written())["request"]["subtype"] == "interrupt"
    owner.conversation.steer("And then this.", "after-interrupt")
    for record in transcript("interrupt"):
        if kind(record) in ("control_response", "result"):
            pipe.lines.put_nowait(record["out"].encode())
    await asyncio.wait_for(driver, WAIT)
    assert owner.told == [Refused("after-interrupt", INTERRUPTED)]
    assert pipe.written.empty()
    assert claude.parse_talk(stdout_of("interrupt")).interrupted
