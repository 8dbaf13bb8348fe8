"""Owner actions from chat: looking at the board, moving cards, drafts and answers.

Authority was checked before anything here runs (service.py); these handlers
only do the work and answer through the outbox (replies.py). A refusal is said
in the chat's language: unknown slugs get the closest existing ones, refused
transitions name the phase and the commands allowed there.
"""

from __future__ import annotations

from typing import Any

from chatbot.board import BoardError, BoardService, Change, closest_slugs
from chatbot.chat import render
from chatbot.chat.commands import FOR_ACTION
from chatbot.chat.replies import Decided, Origin, Replies, Work, chat_of
from chatbot.domain.transitions import Action, TransitionRefused
from chatbot.store import Db, Store, telemetry
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import jobs as job_store
from chatbot.store.cards import UnknownCard
from chatbot.store.chat import Request
from chatbot.store.jobs import ActiveJobExists
from chatbot.store.questions import AlreadyAnswered, QuestionRow
from chatbot.transports.base import IncomingEvent

# How many runs /status <slug> shows.
RUNS_SHOWN = 5


class Actions(Replies):
    def __init__(
        self, board: BoardService, store: Store, locale: str, max_chars: int = render.MAX_CHARS
    ):
        super().__init__(store, locale, max_chars)
        self.board = board

    # --- looking ------------------------------------------------------------------

    async def board_status(self, origin: Origin) -> None:
        summary = await self.board.summary(with_slugs=True)
        questions = []
        for question in await self.board.open_questions():
            card = await card_store.get_by_id(self.store.reader, question.card_id)
            questions.append((card.slug if card else "-", question))
        # No store function lists pending requests yet; the query is one line.
        rows = await self.store.reader.fetchall(
            "SELECT * FROM requests WHERE state = 'pending' ORDER BY id"
        )
        requests = [Request(**dict(row)) for row in rows]
        text = render.board(summary, questions, requests, await self._job_slugs(), self.locale)
        await self.send(origin.event, text)

    async def card_status(self, origin: Origin, slug: str) -> None:
        try:
            view = await self.board.view(slug)
        except UnknownCard:
            await self.unknown_card(origin.event, slug)
            return
        runs = await telemetry.for_card(self.store.reader, view.card.id, limit=RUNS_SHOWN)
        text = render.card(view, runs, self.locale)
        await self.send(origin.event, text, card_id=view.card.id)

    async def card_log(self, origin: Origin, slug: str) -> None:
        try:
            view = await self.board.view(slug)
        except UnknownCard:
            await self.unknown_card(origin.event, slug)
            return
        await self.send(origin.event, render.history(view, self.locale), card_id=view.card.id)

    async def runs(self, origin: Origin) -> None:
        jobs = await job_store.listing(self.store.reader)
        await self.send(origin.event, render.runs(jobs, await self._job_slugs(), self.locale))

    async def _job_slugs(self) -> dict[int, str]:
        rows = await self.store.reader.fetchall(
            "SELECT c.id, c.slug FROM cards c JOIN jobs j ON j.card_id = c.id "
            "WHERE j.state IN ('queued', 'running')"
        )
        return {r[0]: r[1] for r in rows}

    # --- moving cards -------------------------------------------------------------

    async def move(
        self,
        origin: Origin,
        slug: str,
        action: Action,
        *,
        payload: dict[str, Any] | None = None,
        reason: str = "",
        also: Work | None = None,
        prefix: str = "",
    ) -> None:
        """An owner action; the answer says where the card went and what runs now."""
        event = origin.event

        async def work(db: Db, change: Change) -> None:
            if also is not None:
                await also(db, change)
            job = await job_store.active_for_card(db, change.card.id)
            text = prefix + self.moved_text(change, action, job)
            await chat_store.enqueue(db, self.post(event, text, card_id=change.card.id))

        try:
            await self.changing(
                work,
                lambda along: self.board.act(
                    slug, action, actor=origin.actor, reason=reason, payload=payload, along=along
                ),
            )
        except Exception as error:  # noqa: BLE001 - explain() re-raises what it cannot explain
            await self.explain(event, slug, error)

    def moved_text(self, change: Change, action: Action, job: job_store.Job | None) -> str:
        card = change.card
        if action is Action.DEPLOY:
            # The phase stays; what changed is that a deployment is on its way.
            return self.text("deploy_queued", slug=card.slug, commit=(card.commit_hash or "")[:12])
        before = change.before.phase.label(self.locale) if change.before else "-"
        text = self.text(
            "moved",
            slug=card.slug,
            command=f"/{FOR_ACTION[action].name}" if action in FOR_ACTION else action.value,
            before=before,
            after=card.phase.label(self.locale),
        )
        if job is not None:
            text += " " + self.text("run_queued", kind=job.kind)
        return text

    async def explain(self, event: IncomingEvent, slug: str, error: Exception) -> None:
        """A refused action, said in the chat's language; unknown errors propagate."""
        if isinstance(error, UnknownCard):
            await self.unknown_card(event, error.slug or slug)
        elif isinstance(error, TransitionRefused):
            await self.send(event, self.refused_text(error), purpose="refusal")
        elif isinstance(error, AlreadyAnswered):
            await self.send(
                event, self.already_answered_text(error.question, slug), purpose="refusal"
            )
        elif isinstance(error, Decided):
            await self.send(event, self.decided_text(error.request), purpose="refusal")
        elif isinstance(error, ActiveJobExists):
            await self.say(event, "job_exists", slug=slug, purpose="refusal")
        elif isinstance(error, BoardError):
            await self.say(event, "board_refused", detail=str(error), purpose="refusal")
        else:
            raise error

    def refused_text(self, refused: TransitionRefused) -> str:
        return self.text(
            "refused",
            slug=refused.slug,
            phase=refused.phase.label(self.locale),
            command=f"/{FOR_ACTION[refused.action].name}"
            if refused.action in FOR_ACTION
            else refused.action.value,
            allowed=render.allowed_commands(refused.allowed, self.locale),
        )

    async def unknown_card(self, event: IncomingEvent, slug: str) -> None:
        close = closest_slugs(slug, await self.board.slugs())
        if close:
            await self.say(event, "unknown_card_hint", slug=slug, choices=", ".join(close))
        else:
            await self.say(event, "unknown_card", slug=slug)

    # --- drafts and answers -------------------------------------------------------

    async def draft(
        self,
        origin: Origin,
        text: str,
        *,
        also: Work | None = None,
        prefix: str = "",
        chat: dict[str, str] | None = None,
    ) -> None:
        """A new intake dialogue; its questions also go to `chat` (default: where it was asked)."""
        event = origin.event

        async def work(db: Db, change: Change) -> None:
            if also is not None:
                await also(db, change)
            answer = prefix + self.text("draft_started", slug=change.card.slug)
            await chat_store.enqueue(db, self.post(event, answer, card_id=change.card.id))

        where = chat or chat_of(event)
        try:
            await self.changing(
                work,
                lambda along: self.board.start_draft(
                    text, actor=origin.actor, origin=where, along=along
                ),
            )
        except Decided as error:
            await self.explain(event, "", error)

    async def answer(
        self, origin: Origin, slug: str, text: str, question: QuestionRow | None = None
    ) -> None:
        event = origin.event

        async def work(db: Db, change: Change) -> None:
            answer = self.text(
                "answered", slug=change.card.slug, phase=change.card.phase.label(self.locale)
            )
            await chat_store.enqueue(db, self.post(event, answer, card_id=change.card.id))

        try:
            await self.changing(
                work,
                lambda along: self.board.answer(
                    slug,
                    text,
                    actor=origin.actor,
                    question_id=question.id if question else None,
                    along=along,
                ),
            )
        except BoardError:
            # The only refusal of board.answer itself: the card has no open question.
            await self.say(event, "no_open_question", slug=slug, purpose="refusal")
        except Exception as error:  # noqa: BLE001 - explain() re-raises the rest
            await self.explain(event, slug, error)

    async def answer_question(
        self,
        origin: Origin,
        question: QuestionRow,
        *,
        text: str | None = None,
        option: int | None = None,
    ) -> None:
        """A reply to a question message, an option reaction, or a plain direct message."""
        event = origin.event
        card = await card_store.get_by_id(self.store.reader, question.card_id)
        if card is None:
            return  # the card was deleted with its question; nothing left to answer
        if question.state != "open":
            await self.send(
                event, self.already_answered_text(question, card.slug), purpose="refusal"
            )
            return
        if option is not None:
            if not 1 <= option <= len(question.options):
                await self.say(event, "no_such_option", option=option, count=len(question.options))
                return
            text = question.options[option - 1]
        if not text:
            await self.say(event, "empty_answer")
            return
        await self.answer(origin, card.slug, text, question)

    def decided_text(self, request: Request) -> str:
        return self.text(
            "request_decided",
            id=request.id,
            state=self.text(f"request_state_{request.state}"),
            by=request.decided_by or "-",
        )

    def already_answered_text(self, question: QuestionRow, slug: str) -> str:
        # People never see question numbers; the card and the question's words they know.
        asked = render.short(question.text)
        if question.state == "cancelled":
            return self.text("question_closed", slug=slug, text=asked)
        return self.text("already_answered", slug=slug, text=asked, by=question.answered_by or "-")
