"""The bot's MCP server for one run: what a working agent may ask of the board.

Each run gets its own server on its own Unix socket (`runners.tool_server`: a folder
only the bot's user may open, removed with the run); the CLI reaches it through the
pump `runners.mcp_bridge`, started as a stdio MCP server, inside the sandbox too. The
socket is the capability: a connection speaks for this run's job and card, and no tool
takes a card. The session is the official SDK's over the socket's lines
(pipeline/tool_session.py).

Tools, by the run's role (`tools_for`):

- `ask_owner(question, options?)` (writing roles): a question row of the job's
  (`board.asks.ask`), posted in the card's rooms (`tell("agent_asked")`); the call waits
  for the answer (pipeline/asking.py) with the idle watchdog held, at most
  `[bot] ask_timeout_s`; then the question closes (`tell("agent_ask_timed_out")`) and
  the tool answers `NO_ANSWER`.
- `card_context()` (every role): the intent, its acceptance criteria, earlier review
  findings, open line comments, earlier answers, as JSON.
- `propose_card(title, goal, scope)` (writing roles): a proposal kept pending until an
  owner confirms it (`tell("agent_proposed")`); nothing is made before.

Each input is checked by its model (pipeline/tool_inputs.py); a refusal is the tool's
error result, never a broken session. After the run ended a call is refused, and its
open questions are closed (`board.asks.close_for_job`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from chatbot.board import BoardError, Card, Job, StoreError
from chatbot.board.ports import WorkerSide
from chatbot.board.run_events import (
    AgentAskClosed,
    AgentAsked,
    AgentAskTimedOut,
    AgentProposed,
    RunEvent,
)
from chatbot.config import Config
from chatbot.domain.roles import Role
from chatbot.pipeline import tool_inputs
from chatbot.pipeline.asking import OwnerAnswers
from runners.pipe import OwnerWait
from runners.tool_server import ToolServer, make_folder, remove_folder

log = logging.getLogger(__name__)

ASK_OWNER = "ask_owner"
CARD_CONTEXT = "card_context"
PROPOSE_CARD = "propose_card"
WRITING_TOOLS = (ASK_OWNER, CARD_CONTEXT, PROPOSE_CARD)
READING_TOOLS = (CARD_CONTEXT,)
#: What the agent is told when nobody answered in time (the issue's words).
NO_ANSWER = "no answer: decide yourself and say so in your report"
RUN_ENDED = "refused: this run has ended; its tools no longer act"
#: A CLI waits this much longer than the bot for a tool call, so the bot's answer
#: (the timeout's `NO_ANSWER`) arrives before the CLI gives up on its own.
CALL_MARGIN_S = 60.0
#: One JSON-RPC line from the CLI; a longer one ends the session (the tools' inputs
#: are far smaller: a 100 KB question is refused by its model, not here).
MAX_LINE_BYTES = 4 * 1024 * 1024

DESCRIPTIONS = {
    ASK_OWNER: (
        "Ask the card's owner a question and wait for the answer (minutes, possibly "
        "longer). Use it when a decision is theirs, not for what you can find out. "
        "Offer up to 4 short options when the answer is a choice. The answer comes back "
        "as this tool's result; without one in time, decide yourself and say so."
    ),
    CARD_CONTEXT: (
        "Read this card: its intent, acceptance criteria, earlier review findings, "
        "open line comments and the owner's earlier answers, as JSON."
    ),
    PROPOSE_CARD: (
        "Propose a follow-up card for work outside this card's scope. Nothing is created "
        "unless the owner confirms it; do not do that work here."
    ),
}


def tools_for(role: Role) -> tuple[str, ...]:
    """A writing run (builder, fixer) may ask and propose; every other role only reads."""
    return WRITING_TOOLS if role.writes else READING_TOOLS


class RunContext(Protocol):
    """What the tools need of their job (pipeline.context.JobContext)."""

    job: Job
    card: Card
    config: Config

    async def tell(self, event: RunEvent) -> None: ...


@dataclass(frozen=True)
class _Listed:
    """One tool as the session lists it (pipeline/tool_session.Listed)."""

    name: str
    description: str
    input_schema: dict[str, Any]


#: pipeline/tool_session.serve: one connection's session, until the peer ends it.
Serve = Callable[
    [
        Sequence[_Listed],
        Callable[[str, dict[str, Any] | None], Awaitable[tuple[str, bool]]],
        asyncio.StreamReader,
        asyncio.StreamWriter,
    ],
    Awaitable[None],
]


def load_session() -> Serve:
    """The MCP session's code; call it in a thread. The SDK takes about half a second
    to import, and most `chatbot` processes (every command but run and worker) never
    serve a tool: a process loads it when its first run starts serving tools."""
    from chatbot.pipeline.tool_session import serve

    _freeze_heap_once()
    return serve


_heap_frozen = False


def _freeze_heap_once() -> None:
    # The SDK's import leaves about 100,000 more long-lived objects (the configuration,
    # the tables and the other SDKs were there already), and the full collections that
    # followed stalled the loop for 50-65 ms, in the middle of a dispatch (measured with
    # bench/dispatch.py: a spawn at 56-83 ms instead of 5-8). Frozen, no full collection
    # walks them again. Once per process: a later freeze would also pin what the
    # process allocated since; gc.collect() first, so that garbage is freed, not pinned.
    global _heap_frozen
    if _heap_frozen:
        return
    _heap_frozen = True
    gc.collect()
    gc.freeze()


@dataclass(frozen=True)
class _Tool:
    model: type[BaseModel]
    limits: dict[str, str]
    act: Callable[[Any], Awaitable[str]]


@contextlib.asynccontextmanager
async def serving_for(
    ctx: RunContext, board: WorkerSide, answers: OwnerAnswers | None, role: Role
) -> AsyncIterator[tuple[ToolServer | None, OwnerWait]]:
    """The run's tool server and its hold on the idle watchdog; no server without the
    worker's answers (nothing would hear an owner's answer)."""
    hold = OwnerWait()
    if answers is None:
        yield None, hold
        return
    async with RunTools(ctx, board, answers, role=role, hold=hold).serving() as server:
        yield server, hold


class RunTools:
    """One run's tool server: `async with RunTools(...).serving() as server` gives the
    `ToolServer` for the run's request; leaving the block ends it."""

    def __init__(
        self,
        ctx: RunContext,
        board: WorkerSide,
        answers: OwnerAnswers,
        *,
        role: Role,
        hold: OwnerWait | None = None,
    ) -> None:
        self.ctx = ctx
        self.board = board
        self.answers = answers
        self.names = tools_for(role)
        self.hold = hold or OwnerWait()
        self.ended = False
        self._connections: set[asyncio.Task[None]] = set()
        self._serve: Serve | None = None
        self._tools: dict[str, _Tool] = {
            ASK_OWNER: _Tool(tool_inputs.AskOwner, tool_inputs.ASK_LIMITS, self._ask),
            CARD_CONTEXT: _Tool(tool_inputs.CardContextInput, {}, self._context),
            PROPOSE_CARD: _Tool(tool_inputs.ProposeCard, tool_inputs.PROPOSE_LIMITS, self._propose),
        }

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[ToolServer]:
        self._serve = await asyncio.to_thread(load_session)
        # Each part is undone however the run ends: cancelled (the bot stopping) while
        # its questions close, or with the socket never bound. The folder's removal runs
        # in a thread, which finishes even when the await on it is cancelled.
        async with contextlib.AsyncExitStack() as undo:
            folder = await asyncio.to_thread(make_folder)
            undo.push_async_callback(asyncio.to_thread, remove_folder, folder)
            timeout = self.ctx.config.bot.ask_timeout_s + CALL_MARGIN_S
            server = ToolServer(folder=folder, tools=self.names, timeout_s=timeout)
            listener = await asyncio.start_unix_server(
                self._connected, path=str(server.socket), limit=MAX_LINE_BYTES
            )
            undo.push_async_callback(self._close, listener)
            undo.push_async_callback(self.end)
            yield server

    async def _close(self, listener: asyncio.Server) -> None:
        listener.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await listener.wait_closed()

    async def end(self) -> None:
        """The run is over: calls are refused, and the questions it left open close."""
        if self.ended:
            return
        self.ended = True
        try:
            closed = await self.board.asks.close_for_job(self.ctx.job, "the run had ended")
        except StoreError as error:
            log.warning("job %s: its open questions stay open: %s", self.ctx.job.id, error)
            return
        for row in closed:
            await self.ctx.tell(AgentAskClosed(self.ctx.card, row, "the run had ended"))

    # --- the session -----------------------------------------------------------------

    def _schema(self, name: str) -> dict[str, Any]:
        schema = self._tools[name].model.model_json_schema()
        schema.pop("title", None)
        return schema

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            listed = [_Listed(name, DESCRIPTIONS[name], self._schema(name)) for name in self.names]
            # Set before the listener opens: connections exist only inside `serving()`.
            assert self._serve is not None
            await self._serve(listed, self.call, reader, writer)
        except Exception:  # noqa: BLE001 - one broken session must not end the run
            log.exception("job %s: its tool session broke", self.ctx.job.id)
        finally:
            self._connections.discard(task)
            writer.close()

    # --- the tools -------------------------------------------------------------------

    async def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
        """(the result's text, whether it is an error) of one tool call."""
        tool = self._tools.get(name)
        if tool is None or name not in self.names:
            return f"refused: this run has no tool {name[:60]!r}", True
        if self.ended:
            return RUN_ENDED, True
        try:
            given = tool.model.model_validate_json(json.dumps(arguments or {}))
        except ValidationError as error:
            return tool_inputs.refusal(error, tool.limits), True
        try:
            return await tool.act(given), False
        except BoardError as error:
            return f"refused: {error}", True
        except StoreError as error:
            log.warning("job %s: tool %s: %s", self.ctx.job.id, name, error)
            return "the board cannot be reached just now; try again later", True

    async def _ask(self, given: tool_inputs.AskOwner) -> str:
        ctx = self.ctx
        row = await self.board.asks.ask(ctx.job, ctx.card, given.question, list(given.options))
        await ctx.tell(AgentAsked(ctx.card, row))
        timeout = ctx.config.bot.ask_timeout_s
        with self.hold.waiting():
            answered = await self.answers.wait(row.id, timeout)
            if answered is None:
                why = f"nobody answered within {_duration(timeout)}"
                closed = await self.board.asks.expire(row.id, why)
                if closed is not None:
                    await ctx.tell(AgentAskTimedOut(ctx.card, closed, why))
                    return NO_ANSWER
                # Answered at the last moment: the answer counts.
                answered = next(iter(await self.board.asks.states([row.id])), row)
        if answered.state == "answered" and answered.answer is not None:
            return f"The owner answered: {answered.answer}"
        reason = answered.closed_reason or "closed"
        return f"{NO_ANSWER} (the question was closed: {reason})"

    async def _context(self, given: tool_inputs.CardContextInput) -> str:
        found = await self.board.asks.context(self.ctx.card)
        return json.dumps(dataclasses.asdict(found), ensure_ascii=False, indent=1, default=str)

    async def _propose(self, given: tool_inputs.ProposeCard) -> str:
        ctx = self.ctx
        proposal = await self.board.asks.propose(
            ctx.job, ctx.card, given.title, given.goal, given.scope
        )
        await ctx.tell(AgentProposed(ctx.card, proposal))
        return (
            f"Proposed as proposal-{proposal.id} ({proposal.slug}). Nothing is created "
            "unless the owner confirms it; go on with this card's own work."
        )


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} seconds"


__all__ = ["NO_ANSWER", "RunTools", "serving_for", "tools_for"]
