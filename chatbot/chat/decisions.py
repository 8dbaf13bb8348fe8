"""Decisions an owner makes on what others proposed: requests and reactions.

A requester's /start, /draft or /research is stored as a request and posted
where it was asked, with its number; the posted message is linked to the
request, so an owner's 👍 or "yes" reply on it finds it again. The first
decision wins: accepting runs the command and records the decision in one
transaction, so a request is never accepted without its action (or twice).

Reactions on the bot's card messages are looked up in the reaction table
(reactions.py) and do what an owner's command would.
"""

from __future__ import annotations

import sqlite3

from chatbot.board import Change
from chatbot.chat import reactions, render
from chatbot.chat.actions import Actions
from chatbot.chat.commands import Invocation
from chatbot.chat.reactions import Effect, Reaction
from chatbot.chat.replies import Decided, Origin, Work
from chatbot.domain.transitions import Action, TransitionRefused, allowed_actions
from chatbot.store import Db
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import questions as question_store
from chatbot.store.cards import UnknownCard
from chatbot.store.chat import Post, Posted, Request


class Decisions(Actions):
    # --- requests -----------------------------------------------------------------

    async def request(self, origin: Origin, invocation: Invocation) -> None:
        """A requester's /start, /draft or /research: posted for an owner to decide."""
        event = origin.event
        name = invocation.name
        argument = invocation.text("slug") or invocation.text("text")
        card_id = None
        action = invocation.command.action
        if action is not None:
            # Tell the requester now what an owner would be told on /accept.
            try:
                card = await self.board.card(argument)
            except UnknownCard:
                await self.unknown_card(event, argument)
                return
            allowed = allowed_actions(card.phase, card.kind, card.failure_stage)
            if action not in allowed:
                refused = TransitionRefused(card.slug, card.phase, action, allowed)
                await self.send(event, self.refused_text(refused), purpose="refusal")
                return
            card_id = card.id
        async with self.store.transaction() as db:
            request = await chat_store.add_request(
                db, origin.actor, event.transport, name, argument
            )
            text = self.text(
                "request_posted",
                id=request.id,
                requester=origin.actor,
                command=f"/{name} {render.short(argument)}",
            )
            # request_id links the posted message to the request: a 👍 or a "yes"
            # reply on it finds the request again.
            post = self.post(event, text, purpose="request", card_id=card_id, request_id=request.id)
            await chat_store.enqueue(db, post)

    async def decide(self, origin: Origin, request_id: int, *, accept: bool) -> None:
        event = origin.event
        request = await chat_store.get_request(self.store.reader, request_id)
        if request is None:
            await self.say(event, "request_unknown", id=request_id, purpose="refusal")
            return
        if request.state != "pending":
            await self.send(event, self.decided_text(request), purpose="refusal")
            return

        async def decided(db: Db, _change: Change | None = None) -> None:
            done = await chat_store.decide_request(db, request_id, accept, origin.actor)
            if done is None:
                fresh = await chat_store.get_request(db, request_id)
                assert fresh is not None
                raise Decided(fresh)
            await self._tell_requester(db, origin, done)

        if not accept:
            try:
                async with self.store.transaction() as db:
                    await decided(db)
                    text = self.text("request_declined", id=request_id, owner=origin.actor)
                    await chat_store.enqueue(db, self.post(event, text))
            except Decided as error:
                await self.explain(event, "", error)
            return
        prefix = self.text("request_accepted", id=request_id, owner=origin.actor) + " "
        if request.command == "draft":
            # The dialogue belongs to the chat the requester asked in.
            asked = await _request_message(self.store.reader, request_id)
            chat = None
            if asked is not None:
                chat = {
                    "transport": asked["transport"],
                    "target_kind": asked["target_kind"],
                    "target": asked["room"],
                }
            await self.draft(origin, request.argument, also=decided, prefix=prefix, chat=chat)
            return
        action = Action(request.command)
        await self.move(
            origin,
            request.argument,
            action,
            reason=f"request #{request_id} by {request.requester}",
            also=decided,
            prefix=prefix,
        )

    async def _tell_requester(self, db: Db, origin: Origin, request: Request) -> None:
        """When an owner decides elsewhere, the chat the request came from hears it too."""
        row = await _request_message(db, request.id)
        if row is None:
            return
        event = origin.event
        if (row["transport"], row["room"]) == (event.transport, event.chat.id):
            return  # the owner decided right there; the reply says it
        key = "request_accepted" if request.state == "accepted" else "request_declined"
        post = Post(
            transport=row["transport"],
            target=row["room"],
            target_kind=row["target_kind"],
            text=self.text(key, id=request.id, owner=origin.actor),
            reply_to=row["message_id"],
            request_id=request.id,
            purpose="request_decided",
        )
        await chat_store.enqueue(db, post)

    # --- reactions ----------------------------------------------------------------

    async def react(self, origin: Origin, posted: Posted, reaction: Reaction) -> None:
        event = origin.event
        if reaction.effect is Effect.OPTION:
            question = None
            if posted.question_id is not None:
                question = await question_store.get(self.store.reader, posted.question_id)
            if question is None:
                await self.say(event, "nothing_to_choose")
                return
            await self.answer_question(origin, question, option=reaction.option)
            return
        if posted.request_id is not None and reaction.effect in (Effect.ACCEPT, Effect.DECLINE):
            await self.decide(origin, posted.request_id, accept=reaction.effect is Effect.ACCEPT)
            return
        card = None
        if posted.card_id is not None:
            card = await card_store.get_by_id(self.store.reader, posted.card_id)
        if card is None:
            await self.say(event, "no_card")
            return
        reason = f"reaction {reaction.shown}"
        if reaction.effect is Effect.ACT:
            assert reaction.action is not None
            await self.move(origin, card.slug, reaction.action, reason=reason)
            return
        recommendation = reactions.pending_recommendation(card)
        if reaction.effect is Effect.DECLINE:
            if recommendation is None:
                await self.say(event, "nothing_to_decline", card_id=card.id)
            else:
                await self.dismiss(origin, card.slug)
            return
        if recommendation is not None:
            action = reactions.recommended_action(recommendation, card)
            if action is None:
                await self.say(
                    event, "recommendation_manual", target=recommendation, card_id=card.id
                )
                return
            await self.move(
                origin,
                card.slug,
                action,
                reason=f"inspector recommendation {recommendation}, {reason}",
                also=_settle_recommendation(origin.actor, "applied"),
            )
        elif reactions.split_offered(card):
            await self.move(origin, card.slug, Action.SPLIT, reason=f"split offer, {reason}")
        else:
            await self.say(event, "nothing_to_accept", card_id=card.id)

    async def dismiss(self, origin: Origin, slug: str) -> None:
        """👎 on a routing recommendation: it is no longer pending; the card stays put."""
        async with self.store.transaction() as db:
            card = await card_store.require(db, slug)
            if reactions.pending_recommendation(card) is None:
                text = self.text("nothing_to_decline")
            else:
                await _mark_recommendation(db, card, origin.actor, "dismissed")
                text = self.text("recommendation_dismissed", slug=slug)
            await chat_store.enqueue(db, self.post(origin.event, text, card_id=card.id))


def _settle_recommendation(actor: str, outcome: str) -> Work:
    async def settle(db: Db, change: Change) -> None:
        card = await card_store.require(db, change.card.slug)
        await _mark_recommendation(db, card, actor, outcome)

    return settle


async def _mark_recommendation(db: Db, card: card_store.Card, actor: str, outcome: str) -> None:
    # Read and written inside one transaction, so no other change to data is lost.
    inspection = {**card.data.get("inspection", {}), "pending": False, outcome + "_by": actor}
    await card_store.update(db, card.slug, data={**card.data, "inspection": inspection})


async def _request_message(db: Db, request_id: int) -> sqlite3.Row | None:
    """The outbox row that announced the request: its chat and, once sent, its id."""
    return await db.fetchone(
        "SELECT transport, room, target_kind, message_id FROM outbox "
        "WHERE request_id = ? AND purpose = 'request' ORDER BY id LIMIT 1",
        (request_id,),
    )
