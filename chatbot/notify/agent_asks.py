"""What the rooms are told of a working agent's questions and proposals.

The worker tells them (`ctx.tell`): `agent_asked` posts the question in the card's
rooms with its options as 1️⃣.. lines (reply, option reaction, web, /answer answer
it), mentioning the owners; `agent_ask_timed_out` and `agent_ask_closed` say it no
longer waits; `agent_proposed` posts a follow-up card proposal (👍 / /confirm, 👎 /
/refuse). The agent's words are untrusted: shown inert as an approval's command is
(a fence no client renders, invisible characters as escapes, no mention), options
as inline code each.
"""

from __future__ import annotations

from chatbot.board import Card, QuestionRow
from chatbot.notify.format import duration, inert, inert_inline, one_line
from chatbot.notify.poster import Poster
from chatbot.store import jobs as job_store
from chatbot.store.proposals import Proposal

NUMBER_KEYS = ("1️⃣", "2️⃣", "3️⃣", "4️⃣")
#: How much of a question a post shows; the whole text is on the card's web page.
QUESTION_SHOWN = 1500
#: How much of a closed question the notice repeats.
CLOSED_SHOWN = 200
PROPOSAL_SHOWN = 1200


class AgentAskNotices:
    def __init__(self, notifier: Poster, ask_timeout_s: float = 900.0):
        self.notifier = notifier
        self.ask_timeout_s = ask_timeout_s

    async def role(self, job_id: int | None) -> str:
        """The role of the run that asked ("builder", "fixer"), as the texts name it."""
        job = await job_store.get(self.notifier.store.reader, job_id) if job_id else None
        return job.kind if job is not None else "agent"

    async def asked(self, card: Card, question: QuestionRow) -> None:
        t = self.notifier.t
        role = await self.role(question.job_id)
        lines = [
            t("agent_asked", slug=card.slug, role=role, text=inert(question.text, QUESTION_SHOWN))
        ]
        lines += [
            f"{NUMBER_KEYS[i]} {inert_inline(option)}" for i, option in enumerate(question.options)
        ]
        timeout = duration(self.ask_timeout_s)
        lines.append(t("agent_asked_hint", slug=card.slug, role=role, timeout=timeout))
        if len(question.text) > QUESTION_SHOWN:
            lines.append(t("agent_asked_full_text", slug=card.slug))
        async with self.notifier.store.transaction() as db:
            await self.notifier.post(
                db,
                "\n".join(lines),
                card=card,
                purpose="question",
                question_id=question.id,
                mention_owners=True,
            )

    async def timed_out(self, card: Card, question: QuestionRow, why: str) -> None:
        await self._ended(card, question, why, "agent_ask_timed_out")

    async def closed(self, card: Card, question: QuestionRow, why: str) -> None:
        await self._ended(card, question, why, "agent_ask_closed")

    async def _ended(self, card: Card, question: QuestionRow, why: str, key: str) -> None:
        role = await self.role(question.job_id)
        body = self.notifier.t(
            key,
            slug=card.slug,
            role=role,
            why=one_line(why, 200),
            text=inert(question.text, CLOSED_SHOWN),
        )
        async with self.notifier.store.transaction() as db:
            await self.notifier.post(
                db, body, card=card, purpose="question_end", question_id=question.id
            )

    async def proposed(self, card: Card, proposal: Proposal) -> None:
        role = await self.role(proposal.job_id)
        said = f"{proposal.title}\n\n{proposal.goal}"
        if proposal.scope:
            said += f"\n\n{proposal.scope}"
        body = self.notifier.t(
            "agent_proposed",
            slug=card.slug,
            role=role,
            proposal=f"proposal-{proposal.id}",
            new_slug=proposal.slug,
            text=inert(said, PROPOSAL_SHOWN),
        )
        async with self.notifier.store.transaction() as db:
            await self.notifier.post(
                db,
                body,
                card=card,
                purpose="proposal",
                mention_owners=True,
                proposal_id=proposal.id,
            )
