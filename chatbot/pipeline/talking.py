"""The worker's side of talking to its running agents.

Each interactive run gets a `Conversation` (runners.runtimes.talk). What people say
reaches it as rows (board/talk.py): on every wake-up of the worker, which a commit
here or, on PostgreSQL, on any host causes, `deliver` hands new steers and
interrupts to the conversations of the jobs running here and resolves the approvals
people answered. What the agent asks goes the other way: `decide` records it, the
room is asked, and the run waits for the first answer, the timeout, or the policy.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from chatbot.board import Card, Job, StoreError, TalkRow, run_events
from chatbot.board import talk as talk_store
from chatbot.board.ports import WorkerSide
from chatbot.board.run_events import (
    ApprovalFlood,
    ApprovalRequested,
    ApprovalTimedOut,
    RunEvent,
    RunNote,
    RunObserver,
    SteerRefused,
)
from chatbot.board.talk import first_line
from chatbot.config import Config
from chatbot.domain.roles import Role
from chatbot.pipeline import attached, redaction
from runners.runtimes import (
    ApprovalAsked,
    Conversation,
    Decision,
    Delivered,
    Refused,
    Steer,
    Taken,
    Told,
)

log = logging.getLogger(__name__)

#: How much of an asked command is kept and posted (the agent's own text: bounded).
MAX_ASKED_CHARS = 8000


class TalkingJob(Protocol):
    """What a conversation needs of its job (pipeline.context.TalkingJob)."""

    job: Job
    card: Card
    config: Config
    laid: attached.Laid
    run_cwd: Path | None

    @property
    def role(self) -> Role: ...

    async def tell(self, event: RunEvent) -> None: ...


@dataclass
class _Live:
    ctx: TalkingJob
    conversation: Conversation
    steers: int = 0
    flood_told: bool = False
    #: Rows handed to the conversation, by their key, until the agent takes them.
    sent: dict[str, TalkRow] = field(default_factory=dict)
    #: Keys of the steers the room was told the agent has ("steered by").
    announced: set[str] = field(default_factory=set)
    #: What the driver tells is handled in its order: "steered by" before "took".
    telling: asyncio.Lock = field(default_factory=asyncio.Lock)


class LiveTalks:
    def __init__(self, board: WorkerSide, config: Config) -> None:
        self.board = board
        self.config = config
        self._live: dict[int, _Live] = {}
        self._waiting: dict[int, asyncio.Future[TalkRow]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    # --- a run's conversation ------------------------------------------------------

    def open(self, ctx: TalkingJob) -> Conversation:
        live: _Live | None = None

        async def decide(asked: ApprovalAsked) -> Decision:
            assert live is not None
            return await self._decide(live, asked)

        def told(news: Told) -> None:
            assert live is not None
            self._spawn(self._told(live, news))

        live = _Live(ctx, Conversation(decide, told))
        self._live[ctx.job.id] = live
        return live.conversation

    def close(self, job_id: int) -> int:
        """The run ended; returns how many steers it took."""
        live = self._live.pop(job_id, None)
        if live is None:
            return 0
        for item in live.conversation.pending():
            if isinstance(item, Steer):  # an interrupt left waiting is no one's message
                self._spawn(self._told(live, Refused(item.key, "the run ended before it was sent")))
        return live.steers

    async def job_ended(self, job: Job, observers: Iterable[RunObserver]) -> None:
        """The job's runs are over: what still waits is closed; a steer its agent never
        took is said to be refused (the owner was told it was sent)."""
        try:
            closed = await self.board.talk.ends(job, "the run had ended")
        except StoreError as error:
            log.warning("job %s: its open steers and approvals stay open: %s", job.id, error)
            return
        for row in closed:
            log.info("job %s ended with its %s %s %s", job.id, row.kind, row.id, row.state)
            card = await self.board.reads.card_by_id(row.card_id) if row.kind == "steer" else None
            if card is None:
                continue
            await run_events.tell(
                observers, SteerRefused(card, row, row.reason or "the run had ended")
            )

    # --- from people to the agents ---------------------------------------------------

    async def deliver(self) -> None:
        """Hand on what people said to the runs here, and what they answered."""
        if self._live:
            for row in await self.board.talk.inbox(list(self._live)):
                live = self._live.get(row.job_id)
                if live is None:
                    continue
                marked = await self.board.talk.mark(row.id, talk_store.SENT, was=(talk_store.OPEN,))
                if marked is None:
                    continue
                if row.kind == "steer":
                    live.sent[str(row.id)] = row
                    text, images = await self._with_files(live, row)
                    # "steered by" waits for the driver's Delivered: until the CLI has read
                    # it, a steer is only on its way (a pipe, a base64 encoding).
                    live.conversation.steer(text, str(row.id), images=images)
                else:
                    live.conversation.interrupt()
                    await self._note(live, "talk_interrupting", who=row.actor)
        if self._waiting:
            for row in await self.board.talk.approval_states(list(self._waiting)):
                future = self._waiting.get(row.id)
                if row.state != talk_store.OPEN and future is not None and not future.done():
                    future.set_result(row)

    async def _with_files(self, live: _Live, row: TalkRow) -> tuple[str, tuple[Path, ...]]:
        """A steer's words and pictures, its files laid out beside the running agent."""
        files = await self.board.files.of_talk(row.id)
        ctx = live.ctx
        if not files or ctx.run_cwd is None:
            return row.text, ()
        await attached.lay_out(
            self.board,
            files,
            ctx.laid,
            cwd=ctx.run_cwd,
            writes=ctx.role.writes,
            workspaces=ctx.config.bot.workspaces,
            job_id=ctx.job.id,
        )
        ids = [file.id for file in files]
        return attached.steer_text(row.text, files, ctx.laid), ctx.laid.images(ids)

    async def _told(self, live: _Live, news: Told) -> None:
        async with live.telling:
            if isinstance(news, Delivered):
                row = live.sent.get(news.key)
                if row is not None:
                    await self._announce(live, news.key, row)
                return
            row = live.sent.pop(news.key, None)
            if row is not None:
                await self._settle(live, news, row)

    async def _announce(self, live: _Live, key: str, row: TalkRow) -> None:
        """Say once in the run's message that the agent has the steer."""
        if key not in live.announced:
            live.announced.add(key)
            await self._note(live, "talk_steered", who=row.actor, text=first_line(row.text))

    async def _settle(self, live: _Live, news: Taken | Refused, row: TalkRow) -> None:
        try:
            if isinstance(news, Taken):
                await self._announce(live, news.key, row)  # a driver that never said Delivered
                live.steers += 1
                await self.board.talk.mark(row.id, talk_store.TAKEN, was=(talk_store.SENT,))
                await self._note(live, "talk_steer_taken", who=row.actor)
            else:
                await self.board.talk.mark(
                    row.id, talk_store.REFUSED, was=(talk_store.SENT,), reason=news.why
                )
                await live.ctx.tell(SteerRefused(live.ctx.card, row, news.why))
        except StoreError as error:
            log.warning("steer %s: its state was not saved: %s", row.id, error)

    # --- from the agents to people ---------------------------------------------------

    async def _decide(self, live: _Live, asked: ApprovalAsked) -> Decision:
        ctx = live.ctx
        role = ctx.role.name
        command = redaction.of(self.config).redact(asked.command)[:MAX_ASKED_CHARS]
        bot = self.config.bot
        if self.config.approvals(role) == "deny":
            reason = f'approvals are off for the {role} (roles.{role}.approvals = "deny")'
            await self._refuse(live, asked, command, reason)
            await self._note(live, "talk_denied_policy", command=first_line(command, 80))
            return Decision(False, reason)
        if await self.board.talk.approvals_asked(ctx.job) >= bot.max_open_approvals:
            reason = f"too many approval requests in this run (at most {bot.max_open_approvals})"
            row = await self._refuse(live, asked, command, reason)
            if not live.flood_told:
                live.flood_told = True
                await ctx.tell(ApprovalFlood(ctx.card, row, reason))
            return Decision(False, reason)
        row = await self.board.talk.ask_approval(
            ctx.job, ctx.card, tool=asked.tool, command=command, cwd=asked.cwd
        )
        future: asyncio.Future[TalkRow] = asyncio.get_running_loop().create_future()
        self._waiting[row.id] = future
        try:
            await ctx.tell(ApprovalRequested(ctx.card, row, asked.reason))
            # An answer that came before the future was there is found on the next
            # wake-up; the worker wakes at least every poll interval.
            try:
                row = await asyncio.wait_for(asyncio.shield(future), bot.approval_timeout_s)
            except TimeoutError:
                why = f"nobody answered within {_minutes(bot.approval_timeout_s)}"
                marked = await self.board.talk.mark(
                    row.id, talk_store.TIMED_OUT, was=(talk_store.OPEN,), reason=why
                )
                if marked is not None:
                    await ctx.tell(ApprovalTimedOut(ctx.card, marked, why))
                row = marked or await self.board.talk.approval(row.id) or row
        finally:
            self._waiting.pop(row.id, None)
        if row.state == talk_store.ALLOWED:
            return Decision(True)
        if row.state == talk_store.DENIED:
            reason = row.reason or "no reason given"
            return Decision(False, f"the owner ({row.actor}) denied this: {reason}")
        return Decision(False, row.reason or "nobody allowed it")

    async def _refuse(self, live: _Live, asked: ApprovalAsked, command: str, why: str) -> TalkRow:
        return await self.board.talk.ask_approval(
            live.ctx.job,
            live.ctx.card,
            tool=asked.tool,
            command=command,
            cwd=asked.cwd,
            state=talk_store.DENIED,
            reason=why,
        )

    # --- telling people ------------------------------------------------------------

    async def _note(self, live: _Live, key: str, **values: object) -> None:
        await live.ctx.tell(RunNote(live.ctx.card, live.ctx.job.id, key, values))

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} seconds"
