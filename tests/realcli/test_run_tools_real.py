"""A run's MCP tools through each real agent CLI (codex, Claude Code, Gemini CLI) and its
scripted provider, at the runner level with the real board (SQLite): the builder calls
`ask_owner` with three options, the owner answers on the board, and the provider's next
request carries the answer as the tool's result; without an answer in time the tool says
so; a bad call comes back as the tool's error; the bubblewrap sandbox reaches the socket.
What each CLI shows of the tools here is written down in docs/agent-tools.md."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chatbot.board import BoardService, Card, Job
from chatbot.board.run_events import AgentAsked, AgentAskTimedOut, RunEvent
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.roles import BY_NAME
from chatbot.pipeline.asking import OwnerAnswers
from chatbot.pipeline.run_tools import NO_ANSWER, RunTools
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from runners.pipe import OwnerWait
from runners.process import ProcessLimits
from runners.runtimes import Mode, run_model
from runners.sandbox import NetworkAccess, Sandbox, find_tool, git_paths
from tests.pipeline.harness import make_repo
from tests.realcli.harness import child_env, run_request
from tests.realcli.providers import Call, Say, Seen

LIMITS = ProcessLimits(timeout=90, idle_timeout=20, kill_grace=1.0)
OWNER = "xmpp:owner@example.org"
QUESTION = {
    "question": "Which port should the service listen on?",
    "options": ["80", "8080", "9090"],
}


@dataclass
class _Bot:
    ask_timeout_s: float


@dataclass
class _Config:
    bot: _Bot


@dataclass
class Ctx:
    job: Job
    card: Card
    config: _Config
    told: list[type[RunEvent]] = field(default_factory=list)

    async def tell(self, event: RunEvent) -> None:
        self.told.append(type(event))


@pytest.fixture
async def board(tmp_path: Path) -> AsyncIterator[BoardService]:
    store = await Store.open(str(tmp_path / "board.sqlite3"))
    repo = tmp_path / "board-repo"
    (repo / "docs" / "intent").mkdir(parents=True)
    yield BoardService(store, repo)
    await store.close()


async def building(board: BoardService, slug: str = "alpha") -> tuple[Job, Card]:
    async with board.store.transaction() as db:
        card = await card_store.create(
            db, slug, Kind.INTENT, Phase.BUILDING, actor="test", title=slug
        )
        await job_store.enqueue(db, kind="builder", lane="light", card_id=card.id)
        job = await job_store.claim(db, "light", "w1", 60, host="hostA")
    assert job is not None
    return job, card


async def answer_when_asked(board: BoardService, card: Card, answers: OwnerAnswers, text: str):
    """The owner, on the board: waits for the question, answers it, the worker wakes."""
    async with asyncio.timeout(60):
        while not (asked := await board.asks.open_for_card(card)):
            await asyncio.sleep(0.05)
    await board.asks.answer(asked[0].id, text, actor=OWNER, via="option")
    await answers.deliver()
    return asked[0]


def tool_call_of(cli: str, seen: Seen) -> list[dict[str, Any]]:
    """The tool calls and results of the request, in the provider's own shape."""
    body = seen.body
    if cli == "claude":
        return [
            block
            for message in body.get("messages", [])
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") in ("tool_use", "tool_result")
        ]
    if cli == "gemini":
        return [
            part
            for content in body.get("contents", [])
            for part in content.get("parts", [])
            if "functionCall" in part or "functionResponse" in part
        ]
    return [
        item
        for item in body.get("input", [])
        if item.get("type") in ("function_call", "function_call_output")
    ]


async def test_the_builder_asks_and_the_answer_is_the_tools_result(
    cli, cli_bins, model, board, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    job, card = await building(board)
    ctx = Ctx(job, card, _Config(_Bot(60)))
    answers = OwnerAnswers(board)
    hold = OwnerWait()
    tools = RunTools(ctx, board, answers, role=BY_NAME["builder"], hold=hold)
    model.script(Call("ask_owner", QUESTION), Say("Port 8080 it is."))
    async with tools.serving() as server:
        request = run_request(
            cli, cli_bins, model, tmp_path, repo, "Build it.", mode=Mode.WORKSPACE_WRITE
        )
        request = _with_tools(request, server)
        owner = asyncio.create_task(answer_when_asked(board, card, answers, "8080"))
        result = await run_model(
            cli, request, limits=LIMITS, base_env=child_env(tmp_path / "home"), hold=hold
        )
        asked = await owner
    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    assert (asked.text, asked.options) == (QUESTION["question"], QUESTION["options"])
    assert ctx.told == [AgentAsked]
    assert result.output.answer == "Port 8080 it is."
    offered = sorted({name for seen in model.seen for name in seen.tools if "ask_owner" in name})
    assert len(offered) == 1, model.seen[0].tools
    # The answer is the tool's result in the next request (codex: after its "Wall time"
    # line; gemini: inside <untrusted_context>; claude: with a system reminder beside it).
    [result_text] = model.seen[-1].tool_results
    assert "The owner answered: 8080" in result_text
    print(f"\n{cli} offered: {offered} after {len(model.seen) - 1} request(s)")
    print(f"{cli} wire: {json.dumps(tool_call_of(cli, model.seen[-1]))[:1500]}")


async def test_nobody_answers_and_the_tool_says_decide_yourself(
    cli, cli_bins, model, board, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    job, card = await building(board)
    ctx = Ctx(job, card, _Config(_Bot(2)))
    tools = RunTools(ctx, board, OwnerAnswers(board), role=BY_NAME["builder"])
    model.script(
        Call("ask_owner", {"question": "Blue or green?", "options": ["blue", "green"]}),
        Call("ask_owner", {"question": "x" * 100_000}),
        Say("I chose blue myself."),
    )
    async with tools.serving() as server:
        request = run_request(
            cli, cli_bins, model, tmp_path, repo, "Build it.", mode=Mode.WORKSPACE_WRITE
        )
        result = await run_model(
            cli,
            _with_tools(request, server),
            limits=LIMITS,
            base_env=child_env(tmp_path / "home"),
        )
    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    assert ctx.told == [AgentAsked, AgentAskTimedOut]
    timed_out, refused = model.seen[-1].tool_results
    assert NO_ANSWER in timed_out
    # Gemini CLI checks the input schema itself and never sends it; the others send it
    # and the bot refuses it: either way the model reads why.
    assert "4000 characters" in refused, refused
    print(f"\n{cli} error wire: {json.dumps(tool_call_of(cli, model.seen[-1])[-1])[:800]}")


async def test_the_sandboxed_run_reaches_its_tools(
    cli, cli_bins, model, board, tmp_path: Path
) -> None:
    tool = find_tool()
    assert tool is not None, "bubblewrap is installed on the test machines (apt bubblewrap)"
    repo = make_repo(tmp_path, {})
    job, card = await building(board)
    ctx = Ctx(job, card, _Config(_Bot(60)))
    answers = OwnerAnswers(board)
    tools = RunTools(ctx, board, answers, role=BY_NAME["builder"])
    model.script(Call("card_context"), Say("Read it."))
    request = run_request(
        cli, cli_bins, model, tmp_path, repo, "Build it.", mode=Mode.WORKSPACE_WRITE
    )
    assert request.home is not None
    request.home.mkdir(parents=True, exist_ok=True)
    sandbox = Sandbox(
        tool=tool,
        network=NetworkAccess.PROVIDER,
        readable=git_paths(repo),
        writable=(repo, request.home),
        scratch=(Path(child_env(tmp_path / "home")["HOME"]),),
    )
    async with tools.serving() as server:
        result = await run_model(
            cli,
            _with_tools(request, server),
            limits=LIMITS,
            base_env=child_env(tmp_path / "home"),
            sandbox=sandbox,
        )
    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    [said] = model.seen[-1].tool_results
    assert "slug" in said and "alpha" in said and "acceptance_criteria" in said, said


def _with_tools(request, server):
    from dataclasses import replace

    return replace(request, tools=server)


async def test_the_idle_watchdog_waits_while_the_owner_is_asked(
    cli, cli_bins, model, board, tmp_path: Path
) -> None:
    """The CLI prints nothing while its tool call waits; the idle watchdog does not count
    then, so an answer that comes later than the idle limit still reaches a living run.

    The limit must outlast the CLI's own silent start (a loaded CI box took gemini past
    3 s before its first request, and the watchdog rightly killed it), so it is 10 s and
    the owner answers 12 s after the question."""
    idle = 10.0
    repo = make_repo(tmp_path, {})
    job, card = await building(board)
    ctx = Ctx(job, card, _Config(_Bot(60)))
    answers = OwnerAnswers(board)
    hold = OwnerWait()
    tools = RunTools(ctx, board, answers, role=BY_NAME["builder"], hold=hold)
    model.script(Call("ask_owner", QUESTION), Say("Port 9090 it is."))

    async def slow_owner() -> None:
        while not (asked := await board.asks.open_for_card(card)):
            await asyncio.sleep(0.05)
        await asyncio.sleep(idle + 2)
        await board.asks.answer(asked[0].id, "9090", actor=OWNER, via="reply")
        await answers.deliver()

    limits = ProcessLimits(timeout=90, idle_timeout=idle, kill_grace=1.0)
    async with tools.serving() as server:
        request = run_request(
            cli, cli_bins, model, tmp_path, repo, "Build it.", mode=Mode.WORKSPACE_WRITE
        )
        owner = asyncio.create_task(slow_owner())
        result = await run_model(
            cli,
            _with_tools(request, server),
            limits=limits,
            base_env=child_env(tmp_path / "home"),
            hold=hold,
        )
        # A run that ended without asking leaves the owner waiting: its failure is the
        # finding, not the owner's wait.
        answered = owner.done()
        owner.cancel()
    assert answered, ("the run ended before the owner answered", result.failure)
    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    assert result.duration > idle + 2
    [said] = model.seen[-1].tool_results
    assert "The owner answered: 9090" in said
