"""Talking to a running agent from the chat: /steer, /interrupt, /approve, /deny, and
the replies and reactions that mean the same.

Owners only (the command table says so, and intake checked it). What is said becomes
a row the worker hands to the agent (board/talk.py); the answer here says it was sent,
and the run's own message says when the agent took it.
"""

from __future__ import annotations

from typing import Any

from chatbot.board import (
    ApprovalDecided,
    AttachPurpose,
    BoardError,
    BoardTx,
    Card,
    NoRunToTalkTo,
    RunCannotTalk,
    TalkRow,
    UnknownCard,
)
from chatbot.board.talk import first_line
from chatbot.chat import render
from chatbot.chat.commands import CommandCall
from chatbot.chat.host import Facet
from chatbot.chat.replies import Origin
from chatbot.domain.phases import Phase
from chatbot.domain.roles import BY_NAME as ROLES
from chatbot.domain.transitions import Action, allowed_actions
from chatbot.notify.format import inert
from runners.runtimes import RUNTIMES
from runners.runtimes.talk import MAX_STEER_CHARS


class TalkHandlers(Facet):
    # --- /steer ----------------------------------------------------------------------

    async def steer(self, origin: Origin, invocation: CommandCall) -> None:
        await self.steer_card(origin, invocation.text("slug"), invocation.text("text"))

    async def steer_card(self, origin: Origin, slug: str, text: str) -> None:
        event = origin.event
        text = text.strip()
        files = await self.host.files_of(origin)
        if not text and files:
            text = self.replies.text("file_answer_text", files=self.host.files_said(files))
        if not text:
            await self.replies.say(event, "steer_empty", slug=slug, purpose="refusal")
            return
        note = ""
        if len(text) > MAX_STEER_CHARS:
            note = " " + self.replies.text("steer_cut", limit=MAX_STEER_CHARS, size=len(text))
            text = text[:MAX_STEER_CHARS]
        try:
            card = await self.board.reads.card(slug)
        except UnknownCard:
            await self.replies.unknown_card(event, slug)
            return
        if card.phase is Phase.INTERRUPTED:
            # The session waits: the steer starts its next turn (a move, as /start is).
            session = card.data.interrupted["session"] if card.data.interrupted else None
            payload = {"steer": text, "session": session or ""}
            reason = f"steered by {origin.actor}: {first_line(text)}"

            async def with_files(tx: BoardTx, change: Any) -> None:
                # The resumed turn is a run of the card: it gets the card's files.
                ids = [file.id for file in files]
                await tx.attach_files(ids, card.id, purpose=AttachPurpose.CARD, actor=origin.actor)

            also = with_files if files else None
            await self.host.act(
                origin, slug, Action.STEER, payload=payload, reason=reason, prefix="", also=also
            )
            return

        async def answer(tx: BoardTx) -> None:
            # board.talk.steer calls this only with a run to talk to (else NoRunToTalkTo).
            role = (await tx.active_job(card.id)).kind  # type: ignore[union-attr]
            said = self.replies.text("steer_sent", slug=slug, role=role) + note
            await tx.post(self.replies.post(event, said, card_id=card.id))

        try:
            ids = [file.id for file in files]
            await self.board.talk.steer(slug, text, actor=origin.actor, along=answer, files=ids)
        except (NoRunToTalkTo, RunCannotTalk) as error:
            await self._cannot(origin, error)

    # --- /interrupt ------------------------------------------------------------------

    async def interrupt(self, origin: Origin, invocation: CommandCall) -> None:
        slug, event = invocation.text("slug"), origin.event

        async def answer(tx: BoardTx) -> None:
            job = await tx.active_job(card.id)
            role = job.kind if job else "agent"
            said = self.replies.text("interrupt_sent", slug=slug, role=role)
            await tx.post(self.replies.post(event, said, card_id=card.id))

        try:
            card = await self.board.reads.card(slug)
            await self.board.talk.interrupt(slug, actor=origin.actor, along=answer)
        except UnknownCard:
            await self.replies.unknown_card(event, slug)
        except (NoRunToTalkTo, RunCannotTalk) as error:
            await self._cannot(origin, error)

    # --- approvals -------------------------------------------------------------------

    async def approve(self, origin: Origin, invocation: CommandCall) -> None:
        await self._decide_for_card(origin, invocation.text("slug"), True, "")

    async def deny(self, origin: Origin, invocation: CommandCall) -> None:
        await self._decide_for_card(
            origin, invocation.text("slug"), False, invocation.text("reason")
        )

    async def _decide_for_card(self, origin: Origin, slug: str, allow: bool, reason: str) -> None:
        try:
            card, asked = await self.board.talk.open_approvals(slug)
        except UnknownCard:
            await self.replies.unknown_card(origin.event, slug)
            return
        if not asked:
            await self.replies.say(origin.event, "approval_none", slug=card.slug, purpose="refusal")
            return
        # The agent waits on one request at a time; the oldest is the one it waits on.
        await self.decide_approval(origin, asked[0].id, allow, reason)

    async def decide_approval(
        self, origin: Origin, talk_id: int, allow: bool, reason: str = ""
    ) -> None:
        event = origin.event
        row = await self.board.talk.approval(talk_id)
        if row is None:
            await self.replies.say(event, "nothing_to_choose", purpose="refusal")
            return
        card = await self.board.reads.card_by_id(row.card_id)
        slug = card.slug if card else "?"

        async def answer(tx: BoardTx) -> None:
            key = "approval_allowed" if allow else "approval_denied"
            said = self.replies.text(
                key, slug=slug, command=inert(row.text, 160), reason=reason or "-"
            )
            await tx.post(self.replies.post(event, said, card_id=row.card_id))

        try:
            await self.board.talk.decide_approval(
                talk_id, allow, actor=origin.actor, reason=reason.strip(), along=answer
            )
        except ApprovalDecided as decided:
            await self.replies.say(
                event,
                "approval_already",
                state=self._state(decided.row),
                who=decided.row.actor or "-",
                purpose="refusal",
            )

    def _state(self, row: TalkRow) -> str:
        return self.replies.text(f"approval_state_{row.state}")

    # --- why nothing was sent ------------------------------------------------------------

    async def _cannot(self, origin: Origin, error: BoardError) -> None:
        event = origin.event
        if isinstance(error, NoRunToTalkTo):
            card = error.card
            ways = allowed_actions(card.phase, card.kind, card.failure_stage)
            await self.replies.say(
                event,
                "steer_no_run",
                slug=card.slug,
                phase=card.phase.label(self.locale),
                allowed=render.allowed_commands(ways, self.locale),
                purpose="refusal",
            )
            return
        assert isinstance(error, RunCannotTalk)
        card, job = error.card, error.job
        await self.replies.say(
            event,
            "steer_cannot",
            slug=card.slug,
            role=job.kind,
            why=self._why_not(card, job.kind),
            purpose="refusal",
        )

    def _why_not(self, card: Card, kind: str) -> str:
        role = ROLES.get(kind)
        if role is None or not role.talks:
            return self.replies.text("talk_role_cannot", role=kind)
        runtime = RUNTIMES.get(self._runtime_of(card))
        if runtime is not None and runtime.talking is None:
            return self.replies.text("talk_engine_cannot", runtime=runtime.name)
        return self.replies.text("talk_not_yet")

    def _runtime_of(self, card: Card) -> str:
        """The runtime the card's builder or fixer runs on: its own, else its lane's."""
        if card.runtime:
            return card.runtime
        config = self.config
        if config is None:
            return ""
        lane = config.lanes.get(card.lane or self.board.default_lane)
        return lane.runtime if lane is not None else ""
