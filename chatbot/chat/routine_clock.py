"""The routines' clock: at each routine's time, its command runs as its owner typed it.

Every bot process runs this loop; the board decides each occurrence once among them
(board/routines.py `claim_due`). The command then goes the way a typed one goes: the
owner's role is checked now, from the configuration as it is now (an owner removed
since stops the routine, and the room is told), the command table parses it and its
handler runs it, so its refusals and ways forward are chat's own; the card's history
names the actor "<owner> via routine". What it says goes to the room it was made in,
never as a reply and with no mention, so quiet hours hold for it.

`tick(now)` is one look at a given time, so tests drive it with any clock; the loop
sleeps until the next routine is due, or until `wake()` (a routine made or changed,
here or, on PostgreSQL, in another process).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from chatbot.board import Post
from chatbot.board import routines as routine_store
from chatbot.board.routines import Occurrence
from chatbot.chat import commands, dispatch
from chatbot.chat.authority import Permission, Standing, permits
from chatbot.chat.commands import UsageProblem
from chatbot.chat.handlers import ChatHandlers
from chatbot.chat.intake import ChatIntake
from chatbot.chat.render import usage_problem
from chatbot.chat.replies import Origin, Replies
from chatbot.domain.counted import counted
from chatbot.domain.schedules import local_words
from chatbot.notify.format import usd
from chatbot.transports.base import Envelope, Identity, IncomingEvent, IncomingMessage, Room
from chatbot.transports.networks import normal

log = logging.getLogger(__name__)

#: The longest sleep: a clock set forward (or a suspended host) is noticed within it.
MAX_SLEEP_S = 300.0
#: After a failed look (the database away), the next one.
RETRY_S = 30.0

Sleep = Callable[[float, asyncio.Event], Awaitable[None]]


async def _sleep(seconds: float, wake: asyncio.Event) -> None:
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await wake.wait()


@dataclass(frozen=True)
class RoutineOrigin(Origin):
    @property
    def actor(self) -> str:
        return f"{self.identity} via routine"


class RoutineReplies(Replies):
    """What the command answers, headed by the routine's line, posted to its room as a
    message of its own (nothing to reply to); a refusal is noted as the run's outcome."""

    def __init__(self, *args: Any, head: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.head = head
        self.refusals: list[str] = []

    def post(self, event: IncomingEvent, text: str, **links: Any) -> Post:
        made = super().post(event, f"{self.head}\n{text}", **links)
        return replace(made, reply_to=None)

    async def send(self, event: IncomingEvent, text: str, **links: Any) -> None:
        if links.get("purpose") == "refusal":
            self.refusals.append(text)
        await super().send(event, text, **links)

    async def unknown_card(self, event: IncomingEvent, slug: str) -> None:
        # Typed, a misspelt card is a hint; for a routine it is a failed run.
        self.refusals.append(self.text("routine_run_no_card", slug=slug))
        await super().unknown_card(event, slug)


def _identity(text: str) -> Identity:
    transport, _, who = text.partition(":")
    return normal(Identity(transport, who))


class RoutineClock:
    def __init__(
        self,
        intake: ChatIntake,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Sleep = _sleep,
    ):
        self.intake = intake
        self.board = intake.board
        self.clock = clock
        self.sleep = sleep
        self.woken = asyncio.Event()
        self.board.routines.wakers.append(self.wake)

    def wake(self) -> None:
        self.woken.set()

    async def run(self, stop: asyncio.Event) -> None:
        stopping = asyncio.ensure_future(stop.wait())
        stopping.add_done_callback(lambda _: self.woken.set())
        try:
            while not stop.is_set():
                now = self.clock()
                try:
                    due = await self.tick(now)
                except Exception:  # noqa: BLE001 - a failed look must not end the bot
                    log.exception("routines: the look failed; the next one tries again")
                    due = now + RETRY_S
                self.woken.clear()
                if not stop.is_set():
                    await self.sleep(min(max(due - now, 0.0), MAX_SLEEP_S), self.woken)
        finally:
            stopping.cancel()

    async def tick(self, now: float) -> float:
        """Fire what is due at `now`; when the next routine is due."""
        for occurrence in await self.board.routines.claim_due(now):
            try:
                await self.fire(occurrence, now)
            except Exception as error:  # noqa: BLE001 - one routine must not stop the others
                log.exception("routine #%d failed", occurrence.routine.id)
                await self._finish(occurrence, routine_store.FAILED, None, str(error), now)
        following = await self.board.routines.next_at()
        return following if following is not None else now + MAX_SLEEP_S

    async def fire(self, occurrence: Occurrence, now: float) -> str:
        """Run one occurrence this process won; its outcome."""
        row = occurrence.routine
        owner = _identity(row.owner)
        chat = Identity(row.transport, row.target) if row.target_kind == "person" else None
        event = IncomingMessage(
            envelope=Envelope(
                chat=chat or Room(row.transport, row.target),
                sender=owner,
                message_id=f"routine-{row.id}-{int(occurrence.due_at)}",
                is_direct=chat is not None,
            ),
            text=row.command,
        )
        intake = self.intake
        due = local_words(occurrence.due_at, row.timezone)
        base = {"id": row.id, "command": row.command, "due": due}
        say = Replies(self.board, intake.locale, prefix=intake.prefixes[0])
        if occurrence.skipped or occurrence.late:
            missed = counted(occurrence.missed, "time", intake.locale)
            following = await self.board.routines.get(row.id)
            next_at = following.next_at
            shown = local_words(next_at, row.timezone) if next_at is not None else "-"
            key = "routine_skipped" if occurrence.skipped else "routine_runs_late"
            await self._tell(say, event, key, missed=missed, next=shown, **base)
            if occurrence.skipped:
                return await self._finish(occurrence, routine_store.SKIPPED, None, "", now)
        role = intake.authority.role(owner)
        if role is not Standing.OWNER:
            why = say.text("routine_why_owner_gone", owner=str(owner))
            stopped, gone = routine_store.STOPPED, routine_store.OWNER_GONE
            await self.board.routines.set_state(row.id, stopped, why, now, cause=gone)
            await self._tell(say, event, "routine_owner_gone", owner=str(owner), **base)
            return await self._finish(occurrence, routine_store.STOPPED, None, why, now)
        if row.budget_usd is not None:
            spent = await self.board.routines.spent(row.id)
            if round(spent, 6) >= round(row.budget_usd, 6):
                why = say.text("routine_why_budget", spent=usd(spent), budget=usd(row.budget_usd))
                paused, by_budget = routine_store.PAUSED, routine_store.BY_BUDGET
                await self.board.routines.set_state(row.id, paused, why, now, cause=by_budget)
                params = {"spent": usd(spent), "budget": usd(row.budget_usd)}
                await self._tell(say, event, "routine_over_budget", **params, **base)
                return await self._finish(occurrence, routine_store.HELD, None, why, now)
        head = say.text("routine_runs", **base)
        replies = RoutineReplies(self.board, intake.locale, prefix=intake.prefixes[0], head=head)
        handlers = ChatHandlers(self.board, replies, intake.handlers.config)
        parsed = commands.parse(row.command, (commands.PREFIX, *intake.prefixes))
        if isinstance(parsed, UsageProblem):
            await replies.send(event, usage_problem(parsed, intake.locale), purpose="refusal")
            return await self._finish(occurrence, routine_store.REFUSED, None, row.command, now)
        if permits(role, parsed.command.access) is not Permission.ALLOW:
            await replies.say(event, "owners_only", purpose="refusal")
        else:
            origin = RoutineOrigin(event, owner, role)
            await dispatch.carry_out(handlers, origin, parsed)
        slug = parsed.text("slug") or None
        if replies.refusals:
            detail = replies.refusals[-1]
            return await self._finish(occurrence, routine_store.REFUSED, slug, detail, now, event)
        return await self._finish(occurrence, routine_store.RAN, slug, "", now)

    async def _tell(self, say: Replies, event: IncomingEvent, key: str, **params: Any) -> None:
        post = replace(say.post(event, say.text(key, **params)), reply_to=None)
        await self.board.post_alone(post)

    async def _finish(
        self,
        occurrence: Occurrence,
        outcome: str,
        slug: str | None,
        detail: str,
        now: float,
        event: IncomingEvent | None = None,
    ) -> str:
        say = Replies(self.board, self.intake.locale, prefix=self.intake.prefixes[0])

        def pause_why(count: int, failed: str) -> str:
            runs = counted(count, "run", self.intake.locale)
            return say.text("routine_why_failures", runs=runs, detail=failed)

        # Recorded when it finished (the clock's now, not the look's): how late it ran.
        paused = await self.board.routines.finish_run(
            occurrence, outcome, slug, detail, self.clock(), pause_why
        )
        if paused and event is not None:
            row = occurrence.routine
            await self._tell(say, event, "routine_paused_failing", id=row.id, command=row.command)
        log.info("routine #%d at %s: %s", occurrence.routine.id, occurrence.due_at, outcome)
        return outcome
