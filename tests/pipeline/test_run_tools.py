"""A run's MCP server (pipeline/run_tools.py) on the real board and store, both engines,
driven by the official SDK's client through the very pump a CLI starts
(`runners.mcp_bridge` over the run's Unix socket): the tools each role gets, an asked
question answered, timed out, refused input, a call after the run ended, another card's
run, a proposal that makes nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from chatbot.board import BoardService, Card, Job, agent_input
from chatbot.board.run_events import (
    AgentAskClosed,
    AgentAsked,
    AgentAskTimedOut,
    AgentProposed,
    RunEvent,
)
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.roles import BY_NAME
from chatbot.pipeline import run_tools, tool_inputs
from chatbot.pipeline.asking import OwnerAnswers
from chatbot.pipeline.run_tools import NO_ANSWER, RUN_ENDED, RunTools
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from runners.pipe import OwnerWait
from runners.tool_server import ToolServer

OWNER = "xmpp:owner@example.org"


@pytest.fixture
async def board(database, tmp_path: Path) -> AsyncIterator[BoardService]:
    store = await Store.open(database.value, password_file=database.password_file)
    repo = tmp_path / "repo"
    (repo / "docs" / "intent").mkdir(parents=True)
    yield BoardService(store, repo)
    await store.close()


@dataclass
class _Bot:
    ask_timeout_s: float = 60


@dataclass
class _Config:
    bot: _Bot = field(default_factory=_Bot)


@dataclass
class Ctx:
    """What the tools read of a job (pipeline.context.JobContext), telling into a list."""

    job: Job
    card: Card
    config: _Config
    told: list[RunEvent] = field(default_factory=list)

    async def tell(self, event: RunEvent) -> None:
        self.told.append(event)

    def events(self) -> list[type[RunEvent]]:
        return [type(event) for event in self.told]


async def running(board: BoardService, slug: str, kind: str = "builder") -> tuple[Job, Card]:
    (board.repo / "docs" / "intent" / f"{slug}.md").write_text(
        f"# {slug}\n\nMake the {slug} page.\n", encoding="utf-8"
    )
    async with board.store.transaction() as db:
        card = await card_store.create(
            db, slug, Kind.INTENT, Phase.BUILDING, actor="test", title=slug
        )
        await job_store.enqueue(db, kind=kind, lane="light", card_id=card.id)
        job = await job_store.claim(db, "light", "w1", 60, host="hostA")
    assert job is not None and job.card_id == card.id
    return job, card


@contextlib.asynccontextmanager
async def client(server: ToolServer) -> AsyncIterator[ClientSession]:
    """The SDK's client on the pump a CLI would start (its stdio joined to the socket)."""
    params = StdioServerParameters(command=server.command(), args=server.args(), env={})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def text_of(result: Any) -> str:
    return "\n".join(part.text for part in result.content)


async def serving(
    board: BoardService, role: str = "builder", timeout: float = 60, slug: str = "alpha"
) -> tuple[Ctx, RunTools, OwnerAnswers, OwnerWait]:
    job, card = await running(board, slug, role)
    ctx = Ctx(job, card, _Config(_Bot(timeout)))
    answers = OwnerAnswers(board)
    hold = OwnerWait()
    return ctx, RunTools(ctx, board, answers, role=BY_NAME[role], hold=hold), answers, hold


async def until(check: Any, what: str, timeout: float = 20.0) -> Any:
    """Poll the store (the worker's wake-ups do the same) until `check()` holds."""
    async with asyncio.timeout(timeout):
        while not (found := await check()):
            await asyncio.sleep(0.05)
    assert found, what
    return found


@pytest.mark.asyncio
async def test_a_builder_asks_with_three_options_and_gets_the_owners_answer(board):
    ctx, tools, answers, hold = await serving(board)
    async with tools.serving() as server, client(server) as session:
        folder = server.folder
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        listed = await session.list_tools()
        assert sorted(tool.name for tool in listed.tools) == [
            "ask_owner",
            "card_context",
            "propose_card",
        ]
        schema = next(t for t in listed.tools if t.name == "ask_owner").input_schema
        assert schema["properties"]["options"]["maxItems"] == 4
        call = asyncio.create_task(
            session.call_tool(
                "ask_owner",
                {"question": "Which port should it listen on?", "options": ["80", "8080", "9090"]},
            )
        )
        [asked] = await until(lambda: board.asks.open_for_card(ctx.card), "the question")
        assert (asked.text, asked.options, asked.job_id) == (
            "Which port should it listen on?",
            ["80", "8080", "9090"],
            ctx.job.id,
        )
        [told] = ctx.told
        assert isinstance(told, AgentAsked) and told.question.id == asked.id
        # The run waits for a person: the idle watchdog is held.
        assert hold.waits == 1
        await board.asks.answer(asked.id, "8080", actor=OWNER, via="option")
        assert not call.done()
        await answers.deliver()  # the worker's wake-up
        result = await asyncio.wait_for(call, 10)
        assert not result.is_error
        assert text_of(result) == "The owner answered: 8080"
        assert hold.waits == 0 and hold.ended_at is not None
    assert not folder.exists()


@pytest.mark.asyncio
async def test_nobody_answers_in_time_and_the_tool_says_decide_yourself(board):
    ctx, tools, answers, _ = await serving(board, timeout=0.5)
    async with tools.serving() as server, client(server) as session:
        result = await session.call_tool("ask_owner", {"question": "Blue or green?"})
        assert not result.is_error and text_of(result) == NO_ANSWER
    assert ctx.events() == [AgentAsked, AgentAskTimedOut]
    timed_out = ctx.told[1]
    assert isinstance(timed_out, AgentAskTimedOut)
    closed = timed_out.question
    [state] = await board.asks.states([closed.id])
    assert state.state == "cancelled" and "nobody answered within 0.5 seconds" in (
        state.closed_reason or ""
    )
    assert await board.asks.open_for_card(ctx.card) == []


@pytest.mark.asyncio
async def test_bad_input_is_a_clear_tool_error_and_asks_nothing(board):
    ctx, tools, _, _ = await serving(board)
    async with tools.serving() as server, client(server) as session:
        cases = {
            "question: at most 4000 characters": {"question": "x" * 100_000},
            "options has too many items (at most 4 options)": {
                "question": "Which?",
                "options": [f"option {n}" for n in range(50)],
            },
            "question holds a control character": {"question": "Deploy\x1b[2J now?"},
            "options.0 holds a line break": {"question": "Which?", "options": ["a\nb"]},
            "offers one answer twice": {"question": "Which?", "options": ["Yes", "yes"]},
            "options must be an array of strings": {"question": "Which?", "options": "a|b"},
            "card is not a field of this tool": {"question": "Which?", "card": "beta"},
        }
        for expected, arguments in cases.items():
            result = await session.call_tool("ask_owner", arguments)
            said = text_of(result)
            assert result.is_error, arguments
            assert said.startswith("refused: ") and "call again" in said, said
            if expected.startswith("question: at most"):
                assert "question is too long (at most 4000 characters)" in said, said
            else:
                assert expected in said, said
        result = await session.call_tool("propose_card", {"title": "t", "goal": "g"})
        assert result.is_error and "scope is required" in text_of(result)
    assert await board.asks.open_for_card(ctx.card) == []
    assert ctx.told == []


@pytest.mark.asyncio
async def test_a_call_after_the_run_ended_is_refused_and_its_questions_close(board):
    ctx, tools, _, _ = await serving(board)
    async with tools.serving() as server, client(server) as session:
        call = asyncio.create_task(session.call_tool("ask_owner", {"question": "Still there?"}))
        await until(lambda: board.asks.open_for_card(ctx.card), "the question")
        await tools.end()  # the run's CLI exited
        result = await session.call_tool("card_context", {})
        assert result.is_error and text_of(result) == RUN_ENDED
        call.cancel()
    assert await board.asks.open_for_card(ctx.card) == []
    assert AgentAskClosed in ctx.events()
    # The socket went with the run: nothing reaches it any more.
    assert not server.socket.exists()


@pytest.mark.asyncio
async def test_a_reading_role_only_reads(board):
    ctx, tools, _, _ = await serving(board, role="reviewer")
    async with tools.serving() as server, client(server) as session:
        assert [tool.name for tool in (await session.list_tools()).tools] == ["card_context"]
        result = await session.call_tool("ask_owner", {"question": "May I?"})
        assert result.is_error and "no tool 'ask_owner'" in text_of(result)
        context = await session.call_tool("card_context", {})
        found = json.loads(text_of(context))
        assert found["slug"] == "alpha" and "Make the alpha page." in found["intent"]
    assert await board.asks.open_for_card(ctx.card) == []


@pytest.mark.asyncio
async def test_a_run_of_another_card_cannot_ask_about_this_one(board):
    job, _ = await running(board, "alpha")
    _, other = await running(board, "beta", kind="fixer")
    ctx = Ctx(job, other, _Config())
    tools = RunTools(ctx, board, OwnerAnswers(board), role=BY_NAME["builder"])
    async with tools.serving() as server, client(server) as session:
        result = await session.call_tool("ask_owner", {"question": "About beta?"})
        assert result.is_error and "another card" in text_of(result)
    assert await board.asks.open_for_card(other) == []


@pytest.mark.asyncio
async def test_propose_card_makes_nothing_until_confirmed(board):
    ctx, tools, _, _ = await serving(board)
    before = await slugs(board)
    async with tools.serving() as server, client(server) as session:
        result = await session.call_tool(
            "propose_card",
            {"title": "Rate limits", "goal": "Limit the login.", "scope": "login only"},
        )
        assert not result.is_error, text_of(result)
        assert "Nothing is created unless the owner confirms" in text_of(result)
    [told] = ctx.told
    assert isinstance(told, AgentProposed)
    proposal = told.proposal
    assert told.card.slug == "alpha" and proposal.state == "pending"
    assert await slugs(board) == before == ["alpha"]
    assert not (board.repo / "docs" / "intent" / f"{proposal.slug}.md").exists()


async def slugs(board: BoardService) -> list[str]:
    rows = await board.store.reader.fetchall("SELECT slug FROM cards ORDER BY slug", ())
    return [row[0] for row in rows]


def test_the_tools_limits_are_the_boards():
    assert (
        tool_inputs.MAX_QUESTION_CHARS,
        tool_inputs.MAX_OPTION_CHARS,
        tool_inputs.MAX_TITLE_CHARS,
        tool_inputs.MAX_GOAL_CHARS,
        tool_inputs.MAX_SCOPE_CHARS,
    ) == (
        agent_input.MAX_QUESTION_CHARS,
        agent_input.MAX_OPTION_CHARS,
        agent_input.MAX_TITLE_CHARS,
        agent_input.MAX_GOAL_CHARS,
        agent_input.MAX_SCOPE_CHARS,
    )


@pytest.mark.asyncio
async def test_a_refused_proposal_leaves_no_card(board):
    ctx, tools, _, _ = await serving(board)
    async with tools.serving() as server, client(server) as session:
        result = await session.call_tool(
            "propose_card",
            {"title": "Cache the index", "goal": "Faster pages.", "scope": "the index page"},
        )
        assert not result.is_error, text_of(result)
    [told] = ctx.told
    assert isinstance(told, AgentProposed)
    proposal = told.proposal
    refused = await board.asks.refuse(proposal.id, actor=OWNER)
    assert refused.state == "refused"
    assert await slugs(board) == ["alpha"]
    assert not (board.repo / "docs" / "intent" / f"{proposal.slug}.md").exists()


@pytest.mark.asyncio
async def test_a_run_cancelled_while_its_questions_close_leaves_no_folder(board, monkeypatch):
    """The bot stopping as a run ends: the socket's folder goes all the same."""
    ctx, tools, _answers, _hold = await serving(board)
    closing = asyncio.Event()

    async def close_for_job(job: Job, why: str) -> list[Any]:
        closing.set()
        await asyncio.Event().wait()  # the store never answers before the cancel
        return []

    monkeypatch.setattr(board.asks, "close_for_job", close_for_job)
    folders: list[Path] = []

    async def run() -> None:
        async with tools.serving() as server:
            folders.append(server.folder)

    task = asyncio.create_task(run())
    await asyncio.wait_for(closing.wait(), 10)
    assert folders[0].exists()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not folders[0].exists()


@pytest.mark.asyncio
async def test_a_socket_that_cannot_be_bound_leaves_no_folder(board, monkeypatch):
    ctx, tools, _answers, _hold = await serving(board)
    made: list[Path] = []
    real_make = run_tools.make_folder

    def make_folder() -> Path:
        made.append(real_make())
        return made[-1]

    async def refuse(*args: Any, **kwargs: Any) -> asyncio.Server:
        raise OSError(98, "Address already in use")

    monkeypatch.setattr(run_tools, "make_folder", make_folder)
    monkeypatch.setattr(run_tools.asyncio, "start_unix_server", refuse)
    with pytest.raises(OSError, match="already in use"):
        async with tools.serving():
            pass
    assert len(made) == 1 and not made[0].exists()
