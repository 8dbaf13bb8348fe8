"""Answering a working agent from the chat: its questions and its proposals.

An agent's question (board/agent_asks.py) is answered like any question, by a reply,
an option reaction, `/answer <slug> <text>` or the web board; the answer goes to the
running agent and moves nothing. A follow-up card it proposed is made by 👍 on its
post or `/confirm proposal-<n>`, dropped by 👎 or `/cancel proposal-<n>`. Owners only:
the intake checked that before any of this runs.
"""

from __future__ import annotations

from chatbot.board import (
    AlreadyAnswered,
    BoardError,
    BoardTx,
    QuestionRow,
    UnknownCard,
)
from chatbot.board.agent_asks import (
    Proposal,
    ProposalDecided,
    ProposalSlugTaken,
    UnknownProposal,
)
from chatbot.board.agent_proposals import target_id
from chatbot.board.tx import ON_PAGE
from chatbot.chat.host import Facet
from chatbot.chat.replies import Origin
from chatbot.chat.texts_agent import STATES


class AgentAnswers(Facet):
    async def answer_agent(
        self, origin: Origin, question: QuestionRow, text: str, via: str
    ) -> None:
        event = origin.event
        if event.envelope.transport == ON_PAGE:
            via = "web"  # the web board's buttons and form go through chat's handlers
        card = await self.board.reads.card_by_id(question.card_id)
        if card is None:
            return  # the card was deleted with its question
        role = await self.board.asks.asker(question)

        async def answered(tx: BoardTx) -> None:
            said = self.replies.text(
                "agent_answered", slug=card.slug, role=role, phase=card.phase.label(self.locale)
            )
            await tx.post(self.replies.post(event, said, card_id=card.id, question_id=question.id))

        try:
            await self.board.asks.answer(
                question.id, text, actor=origin.actor, via=via, along=answered
            )
        except AlreadyAnswered as error:
            refusal = self.replies.already_answered_text(error.question, card.slug)
            await self.replies.send(event, refusal, purpose="refusal")

    # --- proposals --------------------------------------------------------------------

    async def proposal_named(self, word: str) -> Proposal | None:
        """The proposal `/confirm <word>` names, if it names one."""
        found = target_id(word)
        return await self.board.asks.proposal(found) if found is not None else None

    async def said_no_such_proposal(self, origin: Origin, word: str) -> bool:
        """`/confirm proposal-99` where neither that proposal nor a card of that name
        exists: said as the proposal it was meant to be (True), not as a missing card."""
        if target_id(word) is None:
            return False
        try:
            await self.board.reads.card(word)
        except UnknownCard:
            await self.replies.say(
                origin.event, "proposal_unknown", proposal=word, purpose="refusal"
            )
            return True
        return False

    async def decide_proposal(self, origin: Origin, proposal_id: int, *, confirm: bool) -> None:
        event, name = origin.event, f"proposal-{proposal_id}"
        try:
            if confirm:
                pending = await self.board.asks.proposal(proposal_id)
                slug = pending.slug if pending is not None else ""

                async def made(tx: BoardTx) -> None:
                    said = self.replies.text("proposal_confirmed", proposal=name, new_slug=slug)
                    await tx.post(self.replies.post(event, said))

                await self.board.asks.confirm(proposal_id, actor=origin.actor, along=made)
            else:

                async def dropped(tx: BoardTx) -> None:
                    said = self.replies.text("proposal_refused", proposal=name)
                    await tx.post(self.replies.post(event, said))

                await self.board.asks.refuse(proposal_id, actor=origin.actor, along=dropped)
        except UnknownProposal:
            await self.replies.say(event, "proposal_unknown", proposal=name, purpose="refusal")
        except ProposalDecided as error:
            decided = error.proposal
            state = STATES.get(self.locale, STATES["en"]).get(decided.state, decided.state)
            await self.replies.say(
                event,
                "proposal_decided",
                proposal=name,
                state=state,
                by=decided.decided_by or "-",
                purpose="refusal",
            )
        except ProposalSlugTaken as error:
            await self.replies.say(
                event, "proposal_taken", proposal=name, detail=str(error), purpose="refusal"
            )
        except BoardError as error:
            await self.replies.explain(event, "", error)
