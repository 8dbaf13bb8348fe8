"""Codex through `codex app-server` (runners/runtimes/codex_talk.py, codex_wire.py): the
command lines, the hand-over line, the parser and the driver, on transcripts captured
from the pinned codex (tests/runners/data/codex_app_server/, see its README). The real
CLI runs the same paths in tests/realcli/test_talk_codex_real.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from runners.runtimes import (
    RUNTIMES,
    ApprovalAsked,
    Conversation,
    Decision,
    InvalidRequest,
    Mode,
    Refused,
    RunRequest,
    Taken,
    Told,
    Usage,
    codex,
    codex_talk,
    openrouter,
)
from runners.runtimes import codex_wire as wire

DATA = Path(__file__).parent / "data" / "codex_app_server"
KEY = Path("/etc/bot/secrets/gateway key")
UNKNOWN = "01a22fc5-0000-7000-8000-000000000000"


def transcript(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines()]


def stdout_of(name: str) -> str:
    """What codex printed in a captured run: its side of the conversation."""
    return "".join(
        json.dumps(entry["message"]) + "\n"
        for entry in transcript(name)
        if entry["from"] == "codex"
    )


def request(name: str = "first", **fields: Any) -> RunRequest:
    """The request of a captured run (its folder as the transcript writes it)."""
    values: dict[str, Any] = {
        "binary": "codex",
        "cwd": Path(f"/captured/{name}/repo"),
        "prompt": "Do the task.",
        "mode": Mode.WORKSPACE_WRITE,
    }
    return RunRequest(**(values | fields))


# --- command lines --------------------------------------------------------------------


def test_the_app_server_gets_the_provider_model_and_effort_that_exec_gets() -> None:
    asked = request(
        model="gpt-5.5", reasoning_effort="high", base_url="http://gw:8080/v1", api_key_file=KEY
    )
    talk = codex.build_talk_argv(asked)
    one_shot = codex.build_argv(asked)
    assert talk.argv[-1] == "app-server" and talk.argv[0] == "codex"
    providers = [arg for arg in one_shot.argv if arg.startswith("model_provider")]
    assert providers and all(arg in talk.argv for arg in providers)
    assert ["-c", 'model="gpt-5.5"', "-c", 'model_reasoning_effort="high"'] == list(
        talk.argv[-5:-1]
    )
    assert talk.secret_env_files == {"GATEWAY_API_KEY": KEY} == one_shot.secret_env_files
    # The prompt goes in turn/start, never on the command line or in a stdin to close.
    assert talk.stdin == "" and all("Do the task." not in arg for arg in talk.argv)
    assert talk.cwd == asked.cwd and talk.runtime == "codex"


def test_without_a_base_url_the_app_server_uses_codexs_own_login() -> None:
    talk = codex.build_talk_argv(request())
    assert talk.argv == ("codex", "app-server") and talk.secret_env_files == {}


def test_openrouter_talks_through_the_same_app_server_with_its_provider() -> None:
    asked = request(model="vendor/model", api_key_file=KEY)
    talk = openrouter.build_talk_argv(asked)
    assert 'model_provider="openrouter"' in talk.argv and talk.argv[-1] == "app-server"
    assert 'model_providers.openrouter.base_url="https://openrouter.ai/api/v1"' in talk.argv
    assert talk.secret_env_files == {"OPENROUTER_API_KEY": KEY} and talk.runtime == "openrouter"
    with pytest.raises(InvalidRequest):
        openrouter.build_talk_argv(request(model="vendor/model"))  # no key file
    with pytest.raises(InvalidRequest):
        codex.build_talk_argv(request(model="bad model; rm -rf /"))


def test_the_hand_over_line_reads_the_key_from_its_file_in_the_shell(tmp_path: Path) -> None:
    # The line run by bash, with a stand-in "codex" that prints its key and arguments:
    # paths with spaces and quotes survive, and the key is in the environment only.
    folder = tmp_path / "the bot's secrets"
    folder.mkdir()
    key = folder / "gateway key"
    key.write_text("sk-secret-value\n")
    shows = tmp_path / "show args"
    shows.write_text('#!/bin/sh\nprintf "%s\\n" "$GATEWAY_API_KEY" "$@"\n')
    shows.chmod(0o755)
    asked = request(
        binary=str(shows),
        cwd=tmp_path / "work tree",
        model="gpt-5.5",
        reasoning_effort="high",
        base_url="http://gw:8080/v1",
        api_key_file=key,
    )
    line = RUNTIMES["codex"].hand_over(asked, UNKNOWN)
    assert "sk-secret-value" not in line
    assert line.startswith("GATEWAY_API_KEY=")
    done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, check=True)
    printed = done.stdout.splitlines()
    assert printed[0] == "sk-secret-value"
    words = printed[1:]
    assert words[0] == "resume" and words[-3:] == ["-C", str(asked.cwd), UNKNOWN]
    assert 'model_provider="gateway"' in words and 'model="gpt-5.5"' in words
    assert 'model_reasoning_effort="high"' in words
    assert words[words.index("--sandbox") + 1] == "workspace-write"
    assert words[words.index("--ask-for-approval") + 1] == "on-request"


def test_the_hand_over_line_of_each_codex_runtime() -> None:
    router = RUNTIMES["openrouter"].hand_over(
        request(model="vendor/model", api_key_file=KEY), UNKNOWN
    )
    assert router.startswith(f'OPENROUTER_API_KEY="$(cat {shlex.quote(str(KEY))})" codex resume ')
    assert 'model_provider="openrouter"' in router
    # Codex's own login: nothing to read, and a reader's sandbox.
    plain = RUNTIMES["codex"].hand_over(request(mode=Mode.READ_ONLY), UNKNOWN)
    assert shlex.split(plain)[:2] == ["codex", "resume"] and "read-only" in shlex.split(plain)
    for bad in ("--last", "id; rm -rf ~", ""):
        with pytest.raises(InvalidRequest):
            RUNTIMES["codex"].hand_over(request(), bad)


# --- the parser -----------------------------------------------------------------------


def test_a_completed_turn_gives_answer_session_usage_and_model() -> None:
    out = wire.parse_output(stdout_of("plain"))
    assert out.failure is None and not out.interrupted
    assert out.answer == "Built it."
    assert out.session_id == _thread("plain")
    assert out.usage == out.thread_usage == Usage(200, 40, 20)
    assert (out.turns, out.model) == (1, "gpt-5.5")


def test_a_resumed_run_counts_only_its_own_tokens() -> None:
    out = wire.parse_output(stdout_of("resume"), Usage(200, 40, 20))
    assert out.ok and out.answer == "Going on." and out.session_id == _thread("plain")
    assert out.thread_usage == Usage(300, 60, 30) and out.usage == Usage(100, 20, 10)


def test_an_interrupted_turn_is_no_failure_and_keeps_its_session() -> None:
    out = wire.parse_output(stdout_of("interrupt"))
    assert out.interrupted and out.failure is None and out.answer == ""
    assert out.session_id == _thread("interrupt")


def test_an_unknown_session_fails_with_codexs_words() -> None:
    out = wire.parse_output(stdout_of("resume_unknown"))
    assert out.failure == f"codex refused the thread: no rollout found for thread id {UNKNOWN}"
    assert not out.interrupted


def test_a_failed_turn_fails_after_the_retries_that_were_no_failure() -> None:
    out = wire.parse_output(stdout_of("turn_failed"))
    assert out.failure is not None
    assert out.failure.startswith("codex turn failed: unexpected status 401 Unauthorized")
    assert "Reconnecting" not in out.failure


def test_damaged_and_foreign_lines_are_skipped_and_decide_nothing() -> None:
    lines = stdout_of("plain").splitlines()
    noisy = [
        "not json",
        "[1, 2]",
        '{"method": 7}',
        '{"id": 3, "result": null}',
        '{"method": "turn/completed", "params": {"turn": ["x"]}}',
        '{"method": "turn/completed", "params": {"turn": {"id": "another", "status": "failed"}}}',
        '{"method": "item/completed", "params": {"item": {"type": "agentMessage", "text": 5}}}',
        '{"method": "thread/tokenUsage/updated", "params": {"tokenUsage": {"total": []}}}',
    ]
    mixed = [noisy[index % len(noisy)] + "\n" + line for index, line in enumerate(lines)]
    out = wire.parse_output("\n".join(mixed) + "\n" + '{"method":"turn/compl')
    assert out == wire.parse_output(stdout_of("plain"))


def test_output_that_ends_before_the_turn_completed_is_a_failure() -> None:
    cut = stdout_of("plain").split('{"method": "turn/completed"')[0]
    out = wire.parse_output(cut)
    assert out.answer == "Built it." and out.failure == "codex ended before its turn completed"
    assert wire.parse_output("").failure == "codex ended before its turn completed"


def test_messages_of_another_thread_are_not_the_runs_answer() -> None:
    other = {
        "method": "item/completed",
        "params": {"threadId": "sub-agent", "item": {"type": "agentMessage", "text": "Not me."}},
    }
    out = wire.parse_output(stdout_of("plain") + json.dumps(other) + "\n")
    assert out.answer == "Built it."


def test_the_steps_are_the_commands_run_and_the_files_changed() -> None:
    steps = [wire.step_of(entry["message"]) for entry in transcript("plain")]
    assert [step for step in steps if step] == ["ran: echo built > built.txt"]
    steps = [wire.step_of(entry["message"]) for entry in transcript("file_change")]
    # The patch inside the workspace; the declined one outside changed nothing.
    assert [step for step in steps if step] == ["changed: /captured/patch/repo/notes.txt"]


def _thread(name: str) -> str:
    return next(
        entry["message"]["result"]["thread"]["id"]
        for entry in transcript(name)
        if entry["message"].get("id") == "thread" and "result" in entry["message"]
    )


# --- the driver -----------------------------------------------------------------------


class Codex:
    """A `Pipe` that plays codex's side of a captured run: it checks every line the
    driver sends against the transcript and answers with what codex said next.

    `extra` changes the play: {index: [messages]} says more after that line of codex.
    Anything the transcript does not expect is a problem the test fails on, except a
    `turn/steer` codex cannot take (after the turn, or with `refuse_steers`), answered
    as codex does: "no active turn to steer". As the real one, it prints nothing more
    after the transcript and ends its output only when its stdin closes (`close`), or
    when a test says it died (`die`). `on_read[index]` runs when the driver reads that
    line of codex.
    """

    def __init__(
        self,
        name: str,
        extra: dict[int, list[dict[str, Any]]] | None = None,
        *,
        refuse_steers: bool = False,
    ) -> None:
        self.script = transcript(name)
        self.extra = extra or {}
        self.extra_ids = [
            m.get("id") for more in self.extra.values() for m in more if isinstance(m, dict)
        ]
        self.refuse_steers = refuse_steers
        #: What the driver must send instead of a captured line, by index.
        self.instead: dict[int, dict[str, Any]] = {}
        self.on_read: dict[int, Callable[[], None]] = {}
        self.lines = _Reads(self)
        self.sent: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.waiting = 0
        self.at = 0
        self.over = False
        self.dead = False

    def start(self) -> Codex:
        self._play()
        return self

    def _play(self) -> None:
        while self.at < len(self.script) and self.script[self.at]["from"] == "codex":
            message = self.script[self.at]["message"]
            self.lines.put_nowait((self.at, json.dumps(message).encode()))
            self.over = self.over or message.get("method") == "turn/completed"
            for more in self.extra.get(self.at, []):
                self.lines.put_nowait((-1, json.dumps(more).encode()))
            if self.at in self.extra:
                self.lines.put_nowait((-1, b"not json at all {"))
            self.at += 1

    async def send(self, line: str) -> None:
        message = json.loads(line)
        self.sent.append(message)
        if self.dead:
            return  # nobody reads any more
        if "method" not in message and message.get("id") in self.extra_ids:
            return  # an answer to a request a test added: the test looks at it
        if self.at >= len(self.script):
            self.problems.append(f"sent {message} after the transcript's end")
            return
        if message.get("method") == "turn/steer" and (self.over or self.refuse_steers):
            error = {"code": -32600, "message": "no active turn to steer"}
            self.lines.put_nowait((-1, json.dumps({"error": error, "id": message["id"]}).encode()))
            return
        expected = self.instead.get(self.at, self.script[self.at]["message"])
        if message != expected:
            self.problems.append(f"sent {message}, codex expected {expected}")
            return
        self.at += 1
        self._play()

    @contextlib.contextmanager
    def waiting_on_people(self) -> Iterator[None]:
        self.waiting += 1
        try:
            yield
        finally:
            self.waiting -= 1

    def die(self) -> None:
        self.dead = True
        self.lines.put_nowait((-1, None))

    def close(self) -> None:
        self.die()


class _Reads(asyncio.Queue):
    """Codex's lines as the driver reads them, running `Codex.on_read` hooks on the way."""

    def __init__(self, codex_side: Codex) -> None:
        super().__init__()
        self._codex = codex_side

    async def get(self) -> bytes | None:
        index, line = await super().get()
        hook = self._codex.on_read.get(index)
        if hook is not None:
            hook()
        return line


def index_of(name: str, found: Callable[[dict[str, Any]], bool]) -> int:
    """The first line of codex in a transcript that `found` says yes to."""
    return next(
        index
        for index, entry in enumerate(transcript(name))
        if entry["from"] == "codex" and found(entry["message"])
    )


def command_started(message: dict[str, Any]) -> bool:
    item = message.get("params", {}).get("item", {})
    return message.get("method") == "item/started" and item.get("type") == "commandExecution"


class Bot:
    def __init__(self, codex: Codex, decide: Callable[[ApprovalAsked], Any] | None = None) -> None:
        self.told: list[Told] = []
        self.asked: list[tuple[ApprovalAsked, int]] = []
        self._codex = codex
        self._decide = decide
        self.conversation = Conversation(self.decide, self.told.append)

    async def decide(self, asked: ApprovalAsked) -> Decision:
        self.asked.append((asked, self._codex.waiting))
        assert self._decide is not None
        answer = self._decide(asked)
        return await answer if asyncio.iscoroutine(answer) else answer


async def drive(codex_side: Codex, bot: Bot, asked: RunRequest) -> None:
    codex_side.start()
    await asyncio.wait_for(codex_talk.converse(codex_side, asked, bot.conversation), 5)
    assert codex_side.problems == []


async def test_the_driver_speaks_the_captured_protocol_of_a_plain_run() -> None:
    side = Codex("plain")
    bot = Bot(side)
    await drive(side, bot, request("first", prompt="Build it."))
    assert side.at == len(side.script)  # every line the bot sent was the captured one
    assert bot.told == [] and bot.asked == []


async def test_a_steer_goes_into_the_running_turn_and_is_taken() -> None:
    side = Codex("steer")
    bot = Bot(side)
    bot.conversation.steer("Use tabs, not spaces.", "steer-1")
    await drive(side, bot, request("steer"))
    assert bot.told == [Taken("steer-1")]


async def test_an_allowed_command_is_accepted_once_while_people_are_waited_for() -> None:
    side = Codex("approval_accept")
    bot = Bot(side, lambda asked: Decision(True))
    await drive(side, bot, request("accept"))
    [(asked, waiting)] = bot.asked
    assert asked == ApprovalAsked(
        "0",
        "command",
        "echo escalated-output",
        "/captured/accept/repo",
        "It runs outside the sandbox.",
    )
    assert waiting == 1  # the idle watchdog did not count while the owner decided
    assert {"id": 0, "result": {"decision": "accept"}} in side.sent


async def test_a_denial_steers_its_reason_then_declines() -> None:
    side = Codex("approval_decline")
    bot = Bot(side, lambda asked: Decision(False, "no network please"))
    await drive(side, bot, request("decline"))
    reason, decline = side.sent[-2:]
    assert reason["method"] == "turn/steer"
    assert reason["params"]["input"][0]["text"].endswith(": no network please")
    assert decline == {"id": 0, "result": {"decision": "decline"}}
    assert bot.told == []  # the reason is the bot's steer, not an owner's


async def test_a_file_change_outside_the_workspace_is_asked_with_its_changes() -> None:
    side = Codex("file_change")
    bot = Bot(side, lambda asked: Decision(False))
    await drive(side, bot, request("patch"))
    [(asked, _)] = bot.asked
    assert (asked.tool, asked.cwd) == ("file_change", "/captured/patch/repo")
    outside = "/var/tmp/intent-board-capture/outside-the-workspace.txt"
    assert json.loads(asked.command) == [
        {"path": outside, "kind": {"type": "add"}, "diff": "hello\n"}
    ]
    # Denied without a reason: no steer, just the decline.
    assert side.sent[-1] == {"id": 0, "result": {"decision": "decline"}}


async def test_an_interrupt_stops_the_turn_and_the_driver_returns() -> None:
    side = Codex("interrupt")
    bot = Bot(side)
    bot.conversation.interrupt()
    await drive(side, bot, request("interrupt", prompt="Sleep first."))
    assert side.sent[-1]["method"] == "turn/interrupt"


async def test_a_resume_asks_for_the_thread_without_its_earlier_turns() -> None:
    side = Codex("resume")
    bot = Bot(side)
    await drive(
        side, bot, request("first", prompt="Go on, please.", resume_session_id=_thread("plain"))
    )
    thread = side.sent[2]
    assert thread["method"] == "thread/resume" and thread["params"]["excludeTurns"] is True


async def test_a_refused_resume_ends_the_run_before_any_turn() -> None:
    side = Codex("resume_unknown")
    bot = Bot(side)
    bot.conversation.steer("Too early.", "s1")
    await drive(side, bot, request("first", resume_session_id=UNKNOWN))
    assert [message.get("method") for message in side.sent][-1] == "thread/resume"
    assert bot.told == [Refused("s1", codex_talk.FINISHED)]


async def test_a_steer_codex_can_no_longer_take_is_refused_never_queued() -> None:
    # The turn was ending inside codex when the steer came: "no active turn to steer".
    side = Codex("plain", refuse_steers=True)
    bot = Bot(side)
    bot.conversation.steer("Also add tests.", "late")
    await drive(side, bot, request("first", prompt="Build it."))
    assert bot.told == [Refused("late", codex_talk.FINISHED)]
    # Refused once, and no new turn was started for it.
    assert [m.get("method") for m in side.sent].count("turn/start") == 1


async def test_a_steer_that_arrives_as_the_turn_completes_is_refused_not_sent() -> None:
    side = Codex("plain")
    bot = Bot(side)
    completed = index_of("plain", lambda message: message.get("method") == "turn/completed")
    side.on_read[completed] = lambda: bot.conversation.steer("Too late.", "late")
    await drive(side, bot, request("first", prompt="Build it."))
    assert bot.told == [Refused("late", codex_talk.FINISHED)]
    assert not any(message.get("method") == "turn/steer" for message in side.sent)


async def test_lines_of_unknown_or_broken_shapes_are_ignored_by_the_driver() -> None:
    strange: list[Any] = [
        [1, 2],
        "a string",
        {"method": "item/started", "params": {"item": "not an object"}},
        {"method": "item/started", "params": [1]},
        {"method": "turn/completed", "params": {"turn": ["x"]}},
        {"method": "serverRequest/resolved", "params": {"requestId": {"odd": 1}}},
        {"id": True, "result": {}},
        {"id": "nobody-asked", "result": {}},
        {"method": "item/started", "params": {"item": {"type": "userMessage", "clientId": 5}}},
        {"method": "some/future/notification", "params": {"anything": None}},
    ]
    side = Codex("steer", {index_of("steer", command_started): strange})
    bot = Bot(side)
    bot.conversation.steer("Use tabs, not spaces.", "steer-1")
    await drive(side, bot, request("steer"))
    assert bot.told == [Taken("steer-1")]


async def test_a_request_the_bot_cannot_answer_gets_an_error_and_the_turn_goes_on() -> None:
    ask = {"method": "item/tool/requestUserInput", "id": 7, "params": {"questions": []}}
    side = Codex("plain", {index_of("plain", command_started): [ask]})
    bot = Bot(side)
    await drive(side, bot, request("first", prompt="Build it."))
    error = next(message for message in side.sent if message.get("id") == 7)
    assert error["error"]["code"] == codex_talk.NOT_SUPPORTED and bot.asked == []


async def test_an_approval_codex_settled_itself_stops_waiting_for_the_owner() -> None:
    # The turn was interrupted while the owner thought: codex resolves the request itself.
    asked_at = index_of("approval_accept", lambda message: message.get("id") == 0)
    thread = _thread("approval_accept")
    side = Codex("approval_accept")
    turn = side.script[asked_at]["message"]["params"]["turnId"]
    side.script = [*side.script[: asked_at + 1], {"from": "bot", "message": "nothing more"}]
    gave_up = asyncio.Event()

    async def thinking(asked: ApprovalAsked) -> Decision:
        resolved = {"threadId": thread, "requestId": 0}
        side.lines.put_nowait(
            (-1, json.dumps({"method": "serverRequest/resolved", "params": resolved}).encode())
        )
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            gave_up.set()
        raise AssertionError("never decided")

    bot = Bot(side, thinking)
    run = asyncio.ensure_future(drive(side, bot, request("accept")))
    await asyncio.wait_for(gave_up.wait(), 5)
    assert not run.done()  # the run goes on; only the question went away
    ended = {"method": "turn/completed", "params": {"threadId": thread, "turn": {"id": turn}}}
    side.lines.put_nowait((-1, json.dumps(ended).encode()))
    await run
    assert len(bot.asked) == 1 and not any(m.get("id") == 0 for m in side.sent)


async def test_a_bot_that_fails_to_decide_declines() -> None:
    def broken(asked: ApprovalAsked) -> Decision:
        raise RuntimeError("the store is down")

    side = Codex("approval_decline")
    steered = next(
        index
        for index, entry in enumerate(side.script)
        if entry["from"] == "bot" and entry["message"].get("method") == "turn/steer"
    )
    captured = side.script[steered]["message"]
    text = "The owner declined this request (echo escalated-output): "
    text += "the bot could not decide: the store is down"
    side.instead[steered] = {
        **captured,
        "params": {**captured["params"], "input": [{"type": "text", "text": text}]},
    }
    bot = Bot(side, broken)
    await drive(side, bot, request("decline"))
    assert side.sent[-1] == {"id": 0, "result": {"decision": "decline"}}


async def test_codex_ending_mid_turn_ends_the_driver_and_refuses_what_is_left() -> None:
    side = Codex("steer")
    died = index_of("steer", command_started)
    side.script = side.script[: died + 1]
    side.on_read[died] = side.die  # its output ends there, the turn not completed
    bot = Bot(side)
    bot.conversation.steer("Use tabs, not spaces.", "steer-1")
    await drive(side, bot, request("steer"))
    assert bot.told == [Refused("steer-1", codex_talk.FINISHED)]
