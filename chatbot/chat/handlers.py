"""What each allowed act does: one method per command (the command table names it),
and the acts that are not commands (answers, request decisions, reactions).

Authority was checked before anything here runs (intake.py). A move's answer is
written in the move's own transaction (`along=`), so the card, its job and the
reply commit together; refusals are explained in the chat's language (replies.py).
"""

from __future__ import annotations

from typing import Any

from chatbot.board import (
    Along,
    Attachment,
    AttachPurpose,
    BoardError,
    BoardTx,
    Card,
    Change,
    Posted,
    QuestionRow,
)
from chatbot.board.agent_asks import AGENT
from chatbot.board.budget import budget_stopped
from chatbot.board.ports import ChatSide
from chatbot.chat import reactions, render
from chatbot.chat.agent_answers import AgentAnswers
from chatbot.chat.attaching import AttachHandlers
from chatbot.chat.commands import FOR_ACTION, CommandCall
from chatbot.chat.commenting import CommentHandlers
from chatbot.chat.lookups import Lookups
from chatbot.chat.reactions import Effect, Reaction
from chatbot.chat.replies import Decided, Origin, Replies, chat_of
from chatbot.chat.requesting import Requests
from chatbot.chat.routines import RoutineHandlers
from chatbot.chat.spending import SpendHandlers
from chatbot.chat.talking import TalkHandlers
from chatbot.chat.texts import CATALOGUES
from chatbot.chat.web_signin import WebSignIn
from chatbot.config import Config
from chatbot.domain.checks import SKIP_FLAG
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action


class ChatHandlers:
    """The moves, drafts, answers and reactions, and one facet per other family of
    commands (the command table's dispatch, dispatch.py, names which). Each facet asks of
    this class only what `HandlerHost` (host.py) declares."""

    def __init__(self, board: ChatSide, replies: Replies, config: Config | None = None):
        self.board = board
        self.replies = replies
        self.locale = replies.locale
        self.config = config
        self.lookups = Lookups(self)
        self.spending = SpendHandlers(self)
        self.talking = TalkHandlers(self)
        self.web_signin = WebSignIn(self)
        self.commenting = CommentHandlers(self)
        self.attaching = AttachHandlers(self)
        self.requesting = Requests(self)
        self.routines = RoutineHandlers(self)
        self.agent_answers = AgentAnswers(self)

    # --- what the facets ask across (HandlerHost) -----------------------------------

    async def comment(self, origin: Origin, invocation: CommandCall) -> None:
        await self.commenting.comment(origin, invocation)

    async def request(self, origin: Origin, invocation: CommandCall) -> None:
        await self.requesting.request(origin, invocation)

    async def files_of(self, origin: Origin) -> tuple[Attachment, ...]:
        return await self.attaching.files_of(origin)

    def files_said(self, files: tuple[Attachment, ...]) -> str:
        return self.attaching.files_said(files)

    @property
    def loose_minutes(self) -> int:
        return self.attaching.loose_minutes

    # --- commands: moving cards -----------------------------------------------------

    async def move(self, origin: Origin, invocation: CommandCall) -> None:
        """The command's owner action on its card; the answer says where it went."""
        action = invocation.command.action
        assert action is not None, invocation.name
        payload: dict[str, Any] | None = None
        if action is Action.INSPECT:
            payload = {"mode": render.inspect_mode(invocation.text("mode") or None)}
        if invocation.text("checks") == SKIP_FLAG:
            payload = {"skip_checks": True}  # /retry or /deploy without passing checks, once
        if action in (Action.CONFIRM, Action.CANCEL):
            # `/confirm proposal-<n>` makes a working agent's follow-up card, `/cancel
            # proposal-<n>` drops it: a proposal, not a card of that name.
            proposal = await self.agent_answers.proposal_named(invocation.text("slug"))
            if proposal is not None:
                await self.agent_answers.decide_proposal(
                    origin, proposal.id, confirm=action is Action.CONFIRM
                )
                return
            if await self.agent_answers.said_no_such_proposal(origin, invocation.text("slug")):
                return
        await self.act(origin, invocation.text("slug"), action, payload=payload)

    async def act(
        self,
        origin: Origin,
        slug: str,
        action: Action,
        *,
        payload: dict[str, Any] | None = None,
        reason: str = "",
        also: Along | None = None,
        prefix: str = "",
    ) -> None:
        event = origin.event

        async def answer(tx: BoardTx, change: Change) -> None:
            if also is not None:
                await also(tx, change)
            job = await tx.active_job(change.card.id)
            text = prefix + self._moved_text(change, action, job.kind if job else None)
            await tx.post(self.replies.post(event, text, card_id=change.card.id))

        try:
            await self.board.act(
                slug, action, actor=origin.actor, reason=reason, payload=payload, along=answer
            )
        except Exception as error:  # noqa: BLE001 - explain() re-raises what it cannot explain
            await self.replies.explain(event, slug, error)

    def _moved_text(self, change: Change, action: Action, job_kind: str | None) -> str:
        card = change.card
        if action is Action.DEPLOY:
            # The phase stays; what changed is that a deployment is on its way.
            return self.replies.text(
                "deploy_queued", slug=card.slug, commit=(card.commit_hash or "")[:12]
            )
        command = FOR_ACTION.get(action)
        text = self.replies.text(
            "moved",
            slug=card.slug,
            command=f"/{command.name}" if command else action.value,
            before=change.before.phase.label(self.locale) if change.before else "-",
            after=card.phase.label(self.locale),
        )
        if job_kind is not None:
            text += " " + self.replies.text("run_queued", kind=job_kind)
        return text

    # --- commands: drafts and answers ---------------------------------------------

    async def draft(
        self,
        origin: Origin,
        invocation: CommandCall,
        *,
        also: Along | None = None,
        prefix: str = "",
        chat: dict[str, str] | None = None,
    ) -> None:
        """A new intake dialogue; its questions go to `chat` (default: where it was asked;
        empty: only where every card's notices go)."""
        event = origin.event
        files = await self.files_of(origin)

        async def answer(tx: BoardTx, change: Change) -> None:
            if also is not None:
                await also(tx, change)
            text = prefix + self.replies.text("draft_started", slug=change.card.slug)
            if files:
                # In the draft's own transaction: the planner's first turn sees them.
                ids = [file.id for file in files]
                await tx.attach_files(
                    ids, change.card.id, purpose=AttachPurpose.DRAFT, actor=origin.actor
                )
                text += self.replies.text("files_with", files=self.files_said(files))
            await tx.post(self.replies.post(event, text, card_id=change.card.id))

        try:
            await self.board.start_draft(
                invocation.text("text"),
                actor=origin.actor,
                origin=chat if chat is not None else chat_of(event),
                along=answer,
            )
        except Decided as error:
            await self.replies.explain(event, "", error)

    async def answer(
        self, origin: Origin, invocation: CommandCall, question: QuestionRow | None = None
    ) -> None:
        slug = invocation.text("slug")
        event = origin.event
        if question is None:
            # `/answer <slug>` while the card's running agent waits on its question.
            question = await self.board.asks.waiting_on(slug)
        if question is not None and question.kind == AGENT:
            await self.agent_answers.answer_agent(
                origin, question, invocation.text("text"), "command"
            )
            return
        files = await self.files_of(origin)

        async def answered(tx: BoardTx, change: Change) -> None:
            if files:
                await tx.attach_files(
                    [file.id for file in files],
                    change.card.id,
                    purpose=AttachPurpose.ANSWER,
                    actor=origin.actor,
                    question_id=question.id if question else None,
                )
            phase = change.card.phase
            # Said as what happens now ("the planner is on it again"), not as a phase id.
            key = f"answered_{phase.value}"
            key = key if key in CATALOGUES["en"] else "answered"
            text = self.replies.text(key, slug=change.card.slug, phase=phase.label(self.locale))
            await tx.post(self.replies.post(event, text, card_id=change.card.id))

        try:
            await self.board.answer(
                slug,
                invocation.text("text"),
                actor=origin.actor,
                question_id=question.id if question else None,
                along=answered,
            )
        except BoardError:
            # The only refusal of board.answer itself: the card waits for no answer.
            await self.replies.say(event, "no_open_question", slug=slug, purpose="refusal")
        except Exception as error:  # noqa: BLE001 - explain() re-raises the rest
            await self.replies.explain(event, slug, error)

    async def answer_question(
        self, origin: Origin, question: QuestionRow, *, text: str | None, option: int | None
    ) -> None:
        """A reply to a question message, an option reaction, or a plain direct message."""
        event = origin.event
        card = await self.board.reads.card_by_id(question.card_id)
        if card is None:
            return  # the card was deleted with its question; nothing left to answer
        if question.state != "open":
            refusal = self.replies.already_answered_text(question, card.slug)
            await self.replies.send(event, refusal, purpose="refusal")
            return
        if option is not None:
            if not 1 <= option <= len(question.options):
                count = len(question.options)
                await self.replies.say(event, "no_such_option", option=option, count=count)
                return
            text = question.options[option - 1]
        if not text and origin.files:
            text = self.replies.text("file_answer_text", files=self.files_said(origin.files))
        if not text:
            await self.replies.say(event, "empty_answer")
            return
        if question.kind == AGENT:
            via = "option" if option is not None else "reply"
            await self.agent_answers.answer_agent(origin, question, text, via)
            return
        if question.kind == "split_plan" and reactions.yes_or_no(text):
            # "yes" approves the plan; any other words are the reason against it.
            await self.act(origin, card.slug, Action.CONFIRM, reason="split plan approved")
            return
        invocation = CommandCall(FOR_ACTION[Action.ANSWER], {"slug": card.slug, "text": text})
        await self.answer(origin, invocation, question)

    # --- reactions on the bot's messages --------------------------------------------

    async def react(self, origin: Origin, posted: Posted, reaction: Reaction) -> None:
        event = origin.event
        if reaction.effect is Effect.OPTION:
            question = None
            if posted.question_id is not None:
                question = await self.board.reads.question(posted.question_id)
            if question is None:
                await self.replies.say(event, "nothing_to_choose")
                return
            await self.answer_question(origin, question, text=None, option=reaction.option)
            return
        if posted.proposal_id is not None and reaction.effect in (Effect.ACCEPT, Effect.DECLINE):
            accept = reaction.effect is Effect.ACCEPT
            await self.agent_answers.decide_proposal(origin, posted.proposal_id, confirm=accept)
            return
        if posted.request_id is not None and reaction.effect in (Effect.ACCEPT, Effect.DECLINE):
            accept = reaction.effect is Effect.ACCEPT
            await self.requesting.decide_request(origin, posted.request_id, accept=accept)
            return
        # asks_approval holds only with a talk_id: said again for mypy.
        if posted.asks_approval and posted.talk_id is not None:
            if reaction.effect in (Effect.ACCEPT, Effect.DECLINE):
                allow = reaction.effect is Effect.ACCEPT
                await self.talking.decide_approval(origin, posted.talk_id, allow, "")
            else:
                await self.replies.say(event, "nothing_to_accept", card_id=posted.card_id)
            return
        card = await self.board.reads.card_by_id(posted.card_id) if posted.card_id else None
        if card is None:
            await self.replies.say(event, "no_card")
            return
        reason = f"reaction {reaction.shown}"
        if reaction.effect is Effect.ACT:
            assert reaction.action is not None
            await self.act(origin, card.slug, reaction.action, reason=reason)
            return
        if card.phase is Phase.SPLIT_PLAN_WAITING:
            await self._decide_plan(origin, card, reaction)
            return
        recommendation = reactions.pending_recommendation(card)
        if reaction.effect is Effect.DECLINE:
            if recommendation is None:
                await self.replies.say(event, "nothing_to_decline", card_id=card.id)
            else:
                await self._dismiss(origin, card.slug)
            return
        if recommendation is not None:
            action = reactions.recommended_action(recommendation, card)
            if action is None:
                await self.replies.say(
                    event, "recommendation_manual", target=recommendation, card_id=card.id
                )
                return

            async def applied(tx: BoardTx, change: Change) -> None:
                await tx.settle_recommendation(change.card.slug, origin.actor, "applied")

            why = f"inspector recommendation {recommendation}, {reason}"
            await self.act(origin, card.slug, action, reason=why, also=applied)
        elif reactions.split_offered(card):
            await self.act(origin, card.slug, Action.SPLIT, reason=f"split offer, {reason}")
        elif budget_stopped(card):
            await self.act(origin, card.slug, Action.ALLOW, reason=f"budget, {reason}")
        else:
            await self.replies.say(event, "nothing_to_accept", card_id=card.id)

    async def _decide_plan(self, origin: Origin, card: Card, reaction: Reaction) -> None:
        """👍 on a split plan creates its cards; 👎 sends it back to the operator."""
        if reaction.effect is Effect.ACCEPT:
            reason = f"split plan approved, reaction {reaction.shown}"
            await self.act(origin, card.slug, Action.CONFIRM, reason=reason)
            return
        text = self.replies.text("split_plan_declined")
        invocation = CommandCall(FOR_ACTION[Action.ANSWER], {"slug": card.slug, "text": text})
        await self.answer(origin, invocation)

    async def _dismiss(self, origin: Origin, slug: str) -> None:
        """👎 on a routing recommendation: it is no longer pending; the card stays put."""
        async with self.board.transaction() as tx:
            card = await self.board.reads.card(slug)
            if reactions.pending_recommendation(card) is None:
                text = self.replies.text("nothing_to_decline")
            else:
                await tx.settle_recommendation(slug, origin.actor, "dismissed")
                text = self.replies.text("recommendation_dismissed", slug=slug)
            await tx.post(self.replies.post(origin.event, text, card_id=card.id))
