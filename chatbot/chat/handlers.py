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
    BoardError,
    BoardTx,
    Card,
    Change,
    Post,
    Posted,
    QuestionRow,
    Request,
    UnknownCard,
)
from chatbot.board.budget import budget_stopped
from chatbot.chat import reactions, render
from chatbot.chat.commands import BY_NAME, FOR_ACTION, PREFIX, Invocation, parse
from chatbot.chat.commenting import CommentHandlers
from chatbot.chat.lookups import Lookups
from chatbot.chat.reactions import Effect, Reaction
from chatbot.chat.replies import Decided, Origin, chat_of
from chatbot.chat.spending import SpendHandlers
from chatbot.chat.talking import TalkHandlers
from chatbot.chat.texts import CATALOGUES
from chatbot.chat.web_signin import WebSignIn
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action, TransitionRefused, allowed_actions


class ChatHandlers(Lookups, SpendHandlers, TalkHandlers, WebSignIn, CommentHandlers):
    """Every act that may change the board; the looking commands come from Lookups,
    what runs cost and /allow from SpendHandlers."""

    # --- commands: moving cards -----------------------------------------------------

    async def move(self, origin: Origin, invocation: Invocation) -> None:
        """The command's owner action on its card; the answer says where it went."""
        action = invocation.command.action
        assert action is not None, invocation.name
        payload = None
        if action is Action.INSPECT:
            payload = {"mode": render.inspect_mode(invocation.text("mode") or None)}
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
        invocation: Invocation,
        *,
        also: Along | None = None,
        prefix: str = "",
        chat: dict[str, str] | None = None,
    ) -> None:
        """A new intake dialogue; its questions go to `chat` (default: where it was asked;
        empty: only where every card's notices go)."""
        event = origin.event

        async def answer(tx: BoardTx, change: Change) -> None:
            if also is not None:
                await also(tx, change)
            text = prefix + self.replies.text("draft_started", slug=change.card.slug)
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
        self, origin: Origin, invocation: Invocation, question: QuestionRow | None = None
    ) -> None:
        slug = invocation.text("slug")
        event = origin.event

        async def answered(tx: BoardTx, change: Change) -> None:
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
        card = await self.board.card_by_id(question.card_id)
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
        if not text:
            await self.replies.say(event, "empty_answer")
            return
        if question.kind == "split_plan" and reactions.yes_or_no(text):
            # "yes" approves the plan; any other words are the reason against it.
            await self.act(origin, card.slug, Action.CONFIRM, reason="split plan approved")
            return
        invocation = Invocation(FOR_ACTION[Action.ANSWER], {"slug": card.slug, "text": text})
        await self.answer(origin, invocation, question)

    # --- requests from requesters, decided by owners --------------------------------

    async def request(self, origin: Origin, invocation: Invocation) -> None:
        """A requester's /start, /draft or /research: posted for an owner to decide."""
        event = origin.event
        argument = invocation.text("slug") or invocation.text("text")
        if invocation.name == "comment":
            # The whole comment waits: where, and the words.
            argument = " ".join(invocation.text(k) for k in ("slug", "file:line", "text"))
        card_id = None
        action = invocation.command.action
        if action is not None and action is not Action.COMMENT:
            # (Whether a comment is taken, the board says when an owner accepts it: a
            # running agent is steered with it, which no move of the table says.)
            # Tell the requester now what an owner would be told on /accept.
            try:
                card = await self.board.card(argument)
            except UnknownCard:
                await self.replies.unknown_card(event, argument)
                return
            allowed = allowed_actions(
                card.phase,
                card.kind,
                card.failure_stage,
                budget_stopped=budget_stopped(card) is not None,
            )
            if action not in allowed:
                refused = TransitionRefused(card.slug, card.phase, action, allowed)
                await self.replies.send(
                    event, self.replies.refused_text(refused), purpose="refusal"
                )
                return
            card_id = card.id
        async with self.board.transaction() as tx:
            request = await tx.add_request(origin.actor, event.transport, invocation.name, argument)
            text = self.replies.text(
                "request_posted",
                id=request.id,
                requester=origin.actor,
                command=f"/{invocation.name} {render.short(argument)}",
            )
            # request_id links the posted message to the request: a 👍 or a "yes"
            # reply on it finds the request again.
            await tx.post(
                self.replies.post(
                    event, text, purpose="request", card_id=card_id, request_id=request.id
                )
            )

    async def decide(self, origin: Origin, invocation: Invocation) -> None:
        """/accept or /decline a request by its number."""
        await self.decide_request(
            origin, invocation.number("request"), accept=invocation.name == "accept"
        )

    async def decide_request(self, origin: Origin, request_id: int, *, accept: bool) -> None:
        """The first decision wins: accepting runs the command and records the decision
        in one transaction, so a request is never accepted without its action, or twice."""
        event = origin.event
        request = await self.board.request(request_id)
        if request is None:
            await self.replies.say(event, "request_unknown", id=request_id, purpose="refusal")
            return
        if request.state != "pending":
            await self.replies.send(event, self.replies.decided_text(request), purpose="refusal")
            return

        async def decided(tx: BoardTx, _change: Change | None = None) -> None:
            done = await tx.decide_request(request_id, accept, origin.actor)
            if done is None:
                fresh = await tx.request(request_id)
                assert fresh is not None
                raise Decided(fresh)
            await self._tell_requester(tx, origin, done)

        if not accept:
            try:
                async with self.board.transaction() as tx:
                    await decided(tx)
                    text = self.replies.text("request_declined", id=request_id, owner=origin.actor)
                    await tx.post(self.replies.post(event, text))
            except Decided as error:
                await self.replies.explain(event, "", error)
            return
        prefix = self.replies.text("request_accepted", id=request_id, owner=origin.actor) + " "
        command = BY_NAME[request.command]
        if command.name == "comment":
            # Decided first: the board then keeps or refuses the comment as the owner's.
            try:
                async with self.board.transaction() as tx:
                    await decided(tx)
                    await tx.post(self.replies.post(event, prefix.strip()))
            except Decided as error:
                await self.replies.explain(event, "", error)
                return
            parsed = parse(f"/comment {request.argument}", (PREFIX,))
            if isinstance(parsed, Invocation):
                await self.comment(origin, parsed)
            return
        if command.action is None:  # /draft: the dialogue belongs to the requester's chat
            asked = await self.board.request_message(request_id)
            chat = None
            if asked is not None:
                chat = {
                    "transport": asked.transport,
                    "target_kind": asked.target_kind,
                    "target": asked.room,
                }
            invocation = Invocation(command, {"text": request.argument})
            await self.draft(origin, invocation, also=decided, prefix=prefix, chat=chat)
            return
        why = f"request #{request_id} by {request.requester}"
        await self.act(
            origin, request.argument, command.action, reason=why, also=decided, prefix=prefix
        )

    async def _tell_requester(self, tx: BoardTx, origin: Origin, request: Request) -> None:
        """When an owner decides elsewhere, the chat the request came from hears it too."""
        asked = await tx.request_message(request.id)
        if asked is None:
            return
        event = origin.event
        if (asked.transport, asked.room) == (event.transport, event.chat.id):
            return  # the owner decided right there; the reply says it
        key = "request_accepted" if request.state == "accepted" else "request_declined"
        await tx.post(
            Post(
                transport=asked.transport,
                target=asked.room,
                target_kind=asked.target_kind,
                text=self.replies.text(key, id=request.id, owner=origin.actor),
                reply_to=asked.message_id,
                request_id=request.id,
                purpose="request_decided",
            )
        )

    # --- reactions on the bot's messages --------------------------------------------

    async def react(self, origin: Origin, posted: Posted, reaction: Reaction) -> None:
        event = origin.event
        if reaction.effect is Effect.OPTION:
            question = None
            if posted.question_id is not None:
                question = await self.board.question(posted.question_id)
            if question is None:
                await self.replies.say(event, "nothing_to_choose")
                return
            await self.answer_question(origin, question, text=None, option=reaction.option)
            return
        if posted.request_id is not None and reaction.effect in (Effect.ACCEPT, Effect.DECLINE):
            accept = reaction.effect is Effect.ACCEPT
            await self.decide_request(origin, posted.request_id, accept=accept)
            return
        if posted.asks_approval:
            if reaction.effect in (Effect.ACCEPT, Effect.DECLINE):
                allow = reaction.effect is Effect.ACCEPT
                await self.decide_approval(origin, posted.talk_id, allow, "")
            else:
                await self.replies.say(event, "nothing_to_accept", card_id=posted.card_id)
            return
        card = await self.board.card_by_id(posted.card_id) if posted.card_id else None
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
        invocation = Invocation(FOR_ACTION[Action.ANSWER], {"slug": card.slug, "text": text})
        await self.answer(origin, invocation)

    async def _dismiss(self, origin: Origin, slug: str) -> None:
        """👎 on a routing recommendation: it is no longer pending; the card stays put."""
        async with self.board.transaction() as tx:
            card = await self.board.card(slug)
            if reactions.pending_recommendation(card) is None:
                text = self.replies.text("nothing_to_decline")
            else:
                await tx.settle_recommendation(slug, origin.actor, "dismissed")
                text = self.replies.text("recommendation_dismissed", slug=slug)
            await tx.post(self.replies.post(origin.event, text, card_id=card.id))
