"""A working agent's questions and proposals, the board's side (`board.asks`).

A builder or fixer may ask the owner while it works (its MCP tool `ask_owner`), read
its card (`card_context`) and propose a follow-up card (`propose_card`). Rows are the
only link between the run and the people, as for approvals (board/talk.py): the
worker writes them and waits, chat and the web answer them, on any host.

The worker's side (the runs helper codes against exactly this):

- `ask(job, card, text, options) -> QuestionRow`: an open question of kind "agent"
  tied to `job`, with a history line ("the builder asks: …") in the same
  transaction. Refused with `RunOver` (the job no longer runs, or belongs to
  another card), `TooManyQuestions` (the job has `max_open_questions` open) or
  `AgentInputRefused` (text 1..4000 characters once control characters but the
  newline are dropped; at most 4 options of 1..80 characters, one line each, no two
  alike): all BoardErrors whose message is meant for the agent.
  Then tell the rooms: `ctx.tell(AgentAsked(card, question))` (run_events.py).
- `states(question_ids) -> list[QuestionRow]`: for the worker's wake-ups; answered
  rows have `answer`, `answered_by`, `answered_via`. Answering commits with a
  database-wide write, so on PostgreSQL it wakes the worker like an approval does.
- `expire(question_id, why) -> QuestionRow | None`: the wait is over; the question is
  cancelled with `why` if still open (None: it was answered or closed first). Then
  `ctx.tell(AgentAskTimedOut(card, question, why))`.
- `close_for_job(job, why) -> list[QuestionRow]`: the run ended; every question it
  left open is closed. For each returned row, `ctx.tell(AgentAskClosed(card, question,
  why))`: the rooms are told it no longer waits.
- `context(card) -> CardContext`: the intent, its acceptance criteria, earlier review
  findings and open line comments.
- `propose(job, card, title, goal, scope) -> Proposal`: a follow-up card kept
  pending; nothing is created until an owner confirms it (👍 on its post,
  `/confirm proposal-<id>`); 👎 or `/cancel proposal-<id>` drops it. Refused with
  `RunOver`, `TooManyProposals` or `AgentInputRefused`. Then
  `ctx.tell(AgentProposed(card, proposal))`.

People's side: `answer`, `confirm`, `refuse` (chat, the web), each one transaction
with its history line and the answer `along=` it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from chatbot.board import agent_input
from chatbot.board import agent_proposals as proposals
from chatbot.board.agent_input import AgentInputRefused
from chatbot.board.agent_proposals import (
    ProposalDecided,
    ProposalSlugTaken,
    TooManyProposals,
    UnknownProposal,
)
from chatbot.board.comments import agent_view
from chatbot.board.errors import BoardError
from chatbot.board.talk import first_line
from chatbot.board.tx import BoardTx, PageEcho
from chatbot.store import Db, Store
from chatbot.store import cards as card_store
from chatbot.store import comments as comment_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.store.cards import Card
from chatbot.store.jobs import Job, JobState
from chatbot.store.proposals import Proposal
from chatbot.store.questions import AGENT, AlreadyAnswered, QuestionRow

#: Chat's answer (or the web page's), written in the same transaction.
Along = Callable[[BoardTx], Awaitable[None]]
#: How an owner answered: a reply, an option (button or reaction), the web board, /answer.
VIAS = ("reply", "option", "web", "command")
#: How many findings of earlier reviews the context carries (the newest).
REVIEWS_KEPT = 3


class RunOver(BoardError):
    """The job no longer runs, or it is not this card's: its tools are over."""


class TooManyQuestions(BoardError):
    """The run has as many questions open as it may."""


class NotAgentQuestion(BoardError):
    """The question answered is not an agent's (the card's pipeline question has its
    own way: board.answer)."""


@dataclass(frozen=True)
class CardContext:
    slug: str
    title: str
    #: The intent file's path and text ("" when the file cannot be read: `intent_problem`).
    intent_path: str
    intent: str
    acceptance_criteria: tuple[str, ...]
    #: Earlier reviews of the card, oldest first: {"commit", "decision", "report"}.
    reviews: tuple[dict[str, str], ...]
    #: Owners' line comments no commit answered yet (as in a fixer's prompt).
    comments: tuple[dict[str, object], ...]
    #: The owner's answers to the card's earlier questions.
    answers: tuple[dict[str, str], ...] = ()
    intent_problem: str = ""


class AgentAsks:
    def __init__(
        self,
        store: Store,
        repo: Path,
        *,
        max_open_questions: int = 3,
        max_pending_proposals: int = proposals.MAX_PENDING,
        page_echo: Callable[[], PageEcho | None] = lambda: None,
    ):
        self.store = store
        self.repo = repo
        self.max_open_questions = max_open_questions
        self.max_pending_proposals = max_pending_proposals
        # The board's page echo is set after it is made (the app wires the notifier).
        self._page_echo = page_echo

    # --- the worker's side --------------------------------------------------------

    async def ask(self, job: Job, card: Card, text: str, options: Sequence[str]) -> QuestionRow:
        said, offered = agent_input.question(text, options)
        async with self.store.transaction() as db:
            role = await running(db, job, card)
            asked = await question_store.open_of_job(db, job.id)
            if len(asked) >= self.max_open_questions:
                raise TooManyQuestions(
                    f"{len(asked)} of your questions wait for an answer already (at most "
                    f"{self.max_open_questions}); wait for one, or decide yourself and say "
                    "so in your report"
                )
            row = await question_store.ask_agent(db, job.id, card.id, said, offered)
            await card_store.note(
                db, card.id, "agent_asked", role, f"the {role} asks: {first_line(said)}"
            )
        return row

    async def states(self, question_ids: Sequence[int]) -> list[QuestionRow]:
        return await question_store.many(self.store.reader, question_ids)

    async def expire(self, question_id: int, why: str) -> QuestionRow | None:
        async with self.store.transaction() as db:
            closed = await question_store.close(db, question_id, why)
            if closed is not None:
                line = f"question not answered: {first_line(closed.text, 80)} ({why})"
                await card_store.note(db, closed.card_id, "agent_ask_closed", "system", line)
        return closed

    async def close_for_job(self, job: Job, why: str) -> list[QuestionRow]:
        async with self.store.transaction() as db:
            closed = []
            for row in await question_store.open_of_job(db, job.id):
                done = await question_store.close(db, row.id, why)
                if done is not None:
                    line = f"question closed: {first_line(done.text, 80)} ({why})"
                    await card_store.note(db, done.card_id, "agent_ask_closed", "system", line)
                    closed.append(done)
        return closed

    async def context(self, card: Card) -> CardContext:
        db = self.store.reader
        fresh = await card_store.get_by_id(db, card.id) or card
        path, intent, problem = self._intent(fresh)
        reviews = tuple(
            {"commit": entry["commit"], "decision": entry["decision"], "report": entry["report"]}
            for entry in fresh.data.reviews[-REVIEWS_KEPT:]
        )
        answers = tuple(
            {"question": entry["question"], "answer": entry["answer"]}
            for entry in fresh.data.answers
        )
        comments = tuple(agent_view(await comment_store.unanswered(db, fresh.id)))
        return CardContext(
            slug=fresh.slug,
            title=fresh.title,
            intent_path=path,
            intent=intent,
            acceptance_criteria=tuple(fresh.acceptance_criteria),
            reviews=reviews,
            comments=comments,
            answers=answers,
            intent_problem=problem,
        )

    def _intent(self, card: Card) -> tuple[str, str, str]:
        """(path, text, why it is empty) of the card's intent file in the board's checkout."""
        path = card.source_path or f"docs/intent/{card.slug}.md"
        root = self.repo.resolve()
        full = self.repo / path
        if not full.resolve().is_relative_to(root) or full.is_symlink():
            return path, "", "the intent file is a link; an intent must be a file"
        try:
            return path, full.read_text(encoding="utf-8"), ""
        except FileNotFoundError:
            return path, "", "the intent file is missing"
        except (OSError, UnicodeDecodeError) as error:
            return path, "", f"the intent file cannot be read: {error}"

    async def propose(self, job: Job, card: Card, title: str, goal: str, scope: str) -> Proposal:
        title, goal, scope = agent_input.proposal(title, goal, scope)
        async with self.store.transaction() as db:
            role = await running(db, job, card)
            return await proposals.add(
                db, self.repo, job, card, role, (title, goal, scope), self.max_pending_proposals
            )

    # --- people's side ---------------------------------------------------------------

    async def answer(
        self,
        question_id: int,
        text: str,
        *,
        actor: str,
        via: str,
        along: Along | None = None,
    ) -> QuestionRow:
        """The owner's answer; the card stays where it is (its run reads the answer).

        AlreadyAnswered when someone answered (or it closed) first; NotAgentQuestion for
        a question of another kind."""
        if via not in VIAS:
            raise ValueError(f"answered via {via!r}: one of {', '.join(VIAS)}")
        async with self.store.transaction() as db:
            found = await question_store.get(db, question_id)
            if found is None or found.kind != AGENT:
                raise NotAgentQuestion(f"question {question_id} is no agent's question")
            row = await question_store.resolve(db, question_id, text, actor, via)
            line = f"answered: {first_line(text, 120)} (to: {first_line(found.text, 80)})"
            await card_store.note(db, row.card_id, "agent_answered", actor, line)
            if along is not None:
                await along(BoardTx(db, self._page_echo()))
        return row

    async def asker(self, question: QuestionRow) -> str:
        """The role of the run that asked ("builder", "fixer"); "agent" once it is gone."""
        job = await job_store.get(self.store.reader, question.job_id) if question.job_id else None
        return job.kind if job is not None else "agent"

    async def waiting_on(self, slug: str) -> QuestionRow | None:
        """The oldest agent's question open on card `slug` when the card waits on no
        question of its own (None too for an unknown card: its answer says so)."""
        db = self.store.reader
        card = await card_store.get(db, slug)
        if card is None:
            return None
        rows = await question_store.open_of_card(db, card.id)
        if any(row.kind != AGENT for row in rows):
            return None
        return rows[0] if rows else None

    async def open_for_card(self, card: Card) -> list[QuestionRow]:
        rows = await question_store.open_of_card(self.store.reader, card.id)
        return [row for row in rows if row.kind == AGENT]

    async def proposal(self, proposal_id: int) -> Proposal | None:
        return await proposals.get(self.store.reader, proposal_id)

    async def confirm(
        self, proposal_id: int, *, actor: str, along: Along | None = None
    ) -> tuple[Proposal, Card]:
        """The proposal becomes a planned card with its intent file; ProposalDecided,
        ProposalSlugTaken (nothing created) otherwise."""
        return await proposals.confirm(
            self.store, self.repo, proposal_id, actor, along, self._page_echo()
        )

    async def refuse(self, proposal_id: int, *, actor: str, along: Along | None = None) -> Proposal:
        return await proposals.refuse(self.store, proposal_id, actor, along, self._page_echo())


async def running(db: Db, job: Job, card: Card) -> str:
    """The role of `job` if it still runs for `card`; RunOver otherwise."""
    fresh = await job_store.get(db, job.id)
    if fresh is None or fresh.state is not JobState.RUNNING:
        raise RunOver("this run is over: its tools no longer act; end with your report")
    if fresh.card_id != card.id:
        raise RunOver("this run works on another card; it cannot ask about this one")
    return fresh.kind


__all__ = [
    "AGENT",
    "AgentAsks",
    "AgentInputRefused",
    "AlreadyAnswered",
    "CardContext",
    "NotAgentQuestion",
    "Proposal",
    "ProposalDecided",
    "ProposalSlugTaken",
    "UnknownProposal",
    "RunOver",
    "TooManyProposals",
    "TooManyQuestions",
]
