"""Talking to a running agent, the board's side: steers, interrupts and approvals.

People's side (chat, web): `steer`, `interrupt` and `decide_approval` write a row and
a line of the card's history in one transaction, with the answer `along=` it. The
worker's side: `talk_inbox` hands the rows on to the agent's CLI, `ask_approval`
records what an agent asks, `approval_states` says what people answered. Rows are the
only link between the two, so they work across processes and hosts like /cancel.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from chatbot.board.attachments import AttachPurpose, attach_in
from chatbot.board.tx import BoardError, BoardTx, PageEcho
from chatbot.domain.roles import BY_NAME as ROLES
from chatbot.domain.shown import visible
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from chatbot.store import talk as talk_store
from chatbot.store.cards import Card
from chatbot.store.jobs import Job, JobState
from chatbot.store.talk import (  # noqa: F401 - the states, for the worker's side
    ALLOWED,
    CLOSED,
    DENIED,
    OPEN,
    REFUSED,
    SENT,
    TAKEN,
    TIMED_OUT,
    TalkRow,
)

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "ALLOWED",
    "DENIED",
    "OPEN",
    "REFUSED",
    "SENT",
    "TAKEN",
    "TIMED_OUT",
]

#: The answer written in the same transaction (chat's reply).
Along = Callable[[BoardTx], Awaitable[None]]

#: How much of a steer the card's history keeps (the whole text goes to the agent).
HISTORY_CHARS = 160


class NoRunToTalkTo(BoardError):
    """The card has no run in progress that could hear it."""

    def __init__(self, card: Card):
        super().__init__(f"card '{card.slug}' has no run in progress ({card.phase.value})")
        self.card = card


class RunCannotTalk(BoardError):
    """A run is in progress, but not one that can be steered or interrupted."""

    def __init__(self, card: Card, job: Job):
        super().__init__(f"the {job.kind} run of '{card.slug}' cannot be steered")
        self.card = card
        self.job = job


class ApprovalDecided(BoardError):
    """Someone (or the bot) answered first; the first answer stands."""

    def __init__(self, row: TalkRow):
        super().__init__(f"approval {row.id} was answered already ({row.state})")
        self.row = row


@dataclass(frozen=True)
class TalkAdded:
    """What a steer or interrupt became: a row for the running agent."""

    card: Card
    job: Job
    row: TalkRow


def first_line(text: str, limit: int = HISTORY_CHARS) -> str:
    line = next((part.strip() for part in visible(text).splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


class BoardTalk:
    """Talking with a running agent (`board.talk`): people steer, interrupt and decide its
    approvals; the worker hands those over and records what the agent asks."""

    def __init__(self, store: Store, *, page_echo: Callable[[], PageEcho | None]):
        self.store = store
        self._page_echo = page_echo

    # --- people's side ----------------------------------------------------------

    async def steer(
        self,
        slug: str,
        text: str,
        *,
        actor: str,
        along: Along | None = None,
        files: Sequence[int] = (),
    ) -> TalkAdded:
        """`files`: kept files the steer carries (the worker hands them over with it)."""
        history = f"steered: {first_line(text)}"
        return await self._say(slug, "steer", text, actor, history, along, files)

    async def interrupt(self, slug: str, *, actor: str, along: Along | None = None) -> TalkAdded:
        return await self._say(slug, "interrupt", "", actor, "interrupt asked", along)

    async def _say(
        self,
        slug: str,
        kind: str,
        text: str,
        actor: str,
        history: str,
        along: Along | None,
        files: Sequence[int] = (),
    ) -> TalkAdded:
        async with self.store.transaction() as db:
            card = await card_store.require(db, slug)
            job = await job_store.active_for_card(db, card.id)
            if job is None or job.state is not JobState.RUNNING:
                raise NoRunToTalkTo(card)
            if not job.talks:
                raise RunCannotTalk(card, job)
            row = await talk_store.add(db, job.id, card.id, kind, text, actor=actor)
            if files:
                await attach_in(
                    db, files, card.id, purpose=AttachPurpose.STEER, actor=actor, talk_id=row.id
                )
            await card_store.note(db, card.id, kind, actor, history)
            if along is not None:
                await along(BoardTx(db, self._page_echo()))
        return TalkAdded(card, job, row)

    async def open_approvals(self, slug: str) -> tuple[Card, list[TalkRow]]:
        card = await card_store.require(self.store.reader, slug)
        return card, await talk_store.open_approvals(self.store.reader, card.id)

    async def approval(self, talk_id: int) -> TalkRow | None:
        return await talk_store.get(self.store.reader, talk_id)

    async def decide_approval(
        self,
        talk_id: int,
        allow: bool,
        *,
        actor: str,
        reason: str = "",
        along: Along | None = None,
    ) -> TalkRow:
        """Allow once or deny; the first answer wins (ApprovalDecided for a later one)."""
        async with self.store.transaction() as db:
            state = talk_store.ALLOWED if allow else talk_store.DENIED
            row = await talk_store.mark(db, talk_id, state, actor=actor, reason=reason or None)
            if row is None:
                found = await talk_store.get(db, talk_id)
                assert found is not None
                raise ApprovalDecided(found)
            verb = "allowed" if allow else "denied"
            why = f" ({first_line(reason, 80)})" if reason else ""
            await card_store.note(
                db, row.card_id, f"approval_{verb}", actor, f"{verb}: {first_line(row.text)}{why}"
            )
            if along is not None:
                await along(BoardTx(db, self._page_echo()))
        return row

    # --- the worker's side -------------------------------------------------------

    async def begins(self, job: Job) -> None:
        """The job's runs go through an interactive protocol from now on."""
        async with self.store.transaction(exclusive=False) as db:
            await talk_store.set_talks(db, job.id, True)

    async def inbox(self, job_ids: list[int]) -> list[TalkRow]:
        return await talk_store.inbox(self.store.reader, job_ids)

    async def mark(
        self, talk_id: int, state: str, *, was: tuple[str, ...], reason: str | None = None
    ) -> TalkRow | None:
        async with self.store.transaction(exclusive=False) as db:
            return await talk_store.mark(db, talk_id, state, was=was, reason=reason)

    async def ask_approval(
        self,
        job: Job,
        card: Card,
        *,
        tool: str,
        command: str,
        cwd: str,
        state: str = OPEN,
        reason: str | None = None,
    ) -> TalkRow:
        """Record what the agent asks; answered at once by the bot when `state` is an end."""
        async with self.store.transaction() as db:
            row = await talk_store.add(
                db,
                job.id,
                card.id,
                "approval",
                command,
                tool=tool,
                cwd=cwd,
                state=state,
                reason=reason,
                actor=None if state == talk_store.OPEN else "bot",
            )
            if state != talk_store.OPEN:
                what = f"denied: {first_line(command)} ({reason})"
                await card_store.note(db, card.id, "approval_denied", "bot", what)
        return row

    async def approvals_asked(self, job: Job) -> int:
        return await talk_store.approvals_of_job(self.store.reader, job.id)

    async def approval_states(self, talk_ids: list[int]) -> list[TalkRow]:
        return await talk_store.many(self.store.reader, talk_ids)

    async def ends(self, job: Job, reason: str) -> list[TalkRow]:
        """The job's runs are over: steers never taken are refused, approvals still open
        closed; returns what it closed, for the room to be told."""
        async with self.store.transaction(exclusive=False) as db:
            await talk_store.set_talks(db, job.id, False)
            return await talk_store.close_for_job(db, job.id, reason)


def can_talk(kind: str) -> bool:
    role = ROLES.get(kind)
    return role is not None and role.talks
