"""The driver of a codex run the bot talks to (runners/runtimes/codex_talk.py), against
the pinned codex's captured side of the conversation played back (codex_transcripts.py):
every line it sends must be the one it sent to the real CLI."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from runners.runtimes import (
    ApprovalAsked,
    Conversation,
    Decision,
    Refused,
    RunRequest,
    Taken,
    Told,
    codex_talk,
)
from tests.runners.codex_transcripts import (
    Codex,
    command_started,
    index_of,
    request,
    thread_of,
)

UNKNOWN = "01a22fc5-0000-7000-8000-000000000000"


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
    assert bot.told == [Taken("steer-1")]  # its item came before the answer


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
        side, bot, request("first", prompt="Go on, please.", resume_session_id=thread_of("plain"))
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
    assert bot.told == [Taken("steer-1")]  # its item came before the answer


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
    thread = thread_of("approval_accept")
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


async def test_codex_ending_during_the_handshake_ends_the_driver() -> None:
    side = Codex("plain")
    answered = index_of("plain", lambda message: message.get("id") == "initialize")
    side.script = side.script[: answered + 1]
    side.on_read[answered] = side.die
    bot = Bot(side)
    await drive(side, bot, request("first", prompt="Build it."))
    assert [message.get("method") for message in side.sent] == ["initialize", "initialized"]
