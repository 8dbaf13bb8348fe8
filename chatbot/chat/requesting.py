"""Requests: a requester's command waits for an owner, who accepts or declines it.

The first decision wins: accepting runs the command and records the decision in one
transaction, so a request is never accepted without its action, or twice. Files sent
with a request wait with it and go to its card when it is accepted.
"""

from __future__ import annotations

from chatbot.board import (
    BoardTx,
    Change,
    Post,
    Request,
    UnknownCard,
)
from chatbot.board.budget import budget_stopped
from chatbot.chat import render
from chatbot.chat.commands import BY_NAME, PREFIX, CommandCall, parse
from chatbot.chat.host import Facet
from chatbot.chat.replies import Decided, Origin
from chatbot.domain.transitions import Action, TransitionRefused, allowed_actions


class Requests(Facet):
    # --- requests from requesters, decided by owners --------------------------------

    async def request(self, origin: Origin, invocation: CommandCall) -> None:
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
                card = await self.board.reads.card(argument)
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
        files = origin.files
        if not files and invocation.name in ("attach", "draft"):
            files = await self.host.files_of(origin)
        if invocation.name == "attach" and not files:
            await self.replies.say(
                event, "files_nothing", slug=argument, minutes=self.host.loose_minutes
            )
            return
        async with self.board.transaction() as tx:
            request = await tx.add_request(
                origin.actor, event.envelope.transport, invocation.name, argument
            )
            text = self.replies.text(
                "request_posted",
                id=request.id,
                requester=origin.actor,
                command=f"/{invocation.name} {render.short(argument)}",
            )
            if files:
                # They wait with the request; accepted, they go to its card.
                await tx.files_for_request([file.id for file in files], request.id)
                text += self.replies.text("files_with", files=self.host.files_said(files))
            # request_id links the posted message to the request: a 👍 or a "yes"
            # reply on it finds the request again.
            await tx.post(
                self.replies.post(
                    event, text, purpose="request", card_id=card_id, request_id=request.id
                )
            )

    async def decide(self, origin: Origin, invocation: CommandCall) -> None:
        """/accept or /decline a request by its number."""
        await self.decide_request(
            origin, invocation.number("request"), accept=invocation.name == "accept"
        )

    async def decide_request(self, origin: Origin, request_id: int, *, accept: bool) -> None:
        """The first decision wins: accepting runs the command and records the decision
        in one transaction, so a request is never accepted without its action, or twice."""
        event = origin.event
        request = await self.board.reads.request(request_id)
        if request is None:
            await self.replies.say(event, "request_unknown", id=request_id, purpose="refusal")
            return
        if request.state != "pending":
            await self.replies.send(event, self.replies.decided_text(request), purpose="refusal")
            return

        async def decided(tx: BoardTx, change: Change | None = None) -> None:
            done = await tx.decide_request(request_id, accept, origin.actor)
            if done is None:
                fresh = await tx.request(request_id)
                assert fresh is not None
                raise Decided(fresh)
            if change is not None:
                await tx.request_files_to_card(request_id, change.card.id)
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
            if isinstance(parsed, CommandCall):
                await self.host.comment(origin, parsed)
            return
        if command.name == "attach":
            try:
                card = await self.board.reads.card(request.argument)
                async with self.board.transaction() as tx:
                    await decided(tx)
                    attached = await tx.request_files_to_card(request_id, card.id)
                    text = prefix + self.replies.text(
                        "files_attached",
                        slug=card.slug,
                        files=self.host.files_said(tuple(attached)),
                    )
                    await tx.post(self.replies.post(event, text, card_id=card.id))
            except Exception as error:  # noqa: BLE001 - explain() re-raises what it cannot explain
                await self.replies.explain(event, request.argument, error)
            return
        if command.action is None:  # /draft: the dialogue belongs to the requester's chat
            asked = await self.board.reads.request_message(request_id)
            chat = None
            if asked is not None:
                chat = {
                    "transport": asked.transport,
                    "target_kind": asked.target_kind,
                    "target": asked.room,
                }
            invocation = CommandCall(command, {"text": request.argument})
            await self.host.draft(origin, invocation, also=decided, prefix=prefix, chat=chat)
            return
        why = f"request #{request_id} by {request.requester}"
        await self.host.act(
            origin, request.argument, command.action, reason=why, also=decided, prefix=prefix
        )

    async def _tell_requester(self, tx: BoardTx, origin: Origin, request: Request) -> None:
        """When an owner decides elsewhere, the chat the request came from hears it too."""
        asked = await tx.request_message(request.id)
        if asked is None:
            return
        event = origin.event
        if (asked.transport, asked.room) == (event.envelope.transport, event.envelope.chat.id):
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
