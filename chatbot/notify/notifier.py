"""The notifier: turns board changes and model runs into posts for every configured room.

It is a board listener, so each post is written into the outbox in the same
transaction as the change it reports: a restart loses no notification, and a
rolled-back change posts nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from chatbot.board import Change, QuestionRow, TalkRow
from chatbot.board.run_events import (
    AgentAskClosed,
    AgentAsked,
    AgentAskTimedOut,
    AgentProposed,
    ApprovalFlood,
    ApprovalRequested,
    ApprovalTimedOut,
    BudgetHeld,
    ChecksFinished,
    ChecksSentBack,
    ProviderLimited,
    RunEvent,
    RunFinished,
    RunNote,
    RunProgress,
    RunStarted,
    SteerRefused,
)
from chatbot.domain.budgets import BudgetState
from chatbot.domain.quiet import QuietHours
from chatbot.domain.transitions import Action
from chatbot.notify.agent_asks import AgentAskNotices
from chatbot.notify.card_notices import CardNotices
from chatbot.notify.format import MAX_POST_CHARS, commands_with, cut, html_for, usd
from chatbot.notify.quota import QuotaNotices
from chatbot.notify.runs import RunStatus
from chatbot.notify.talk import TalkNotices
from chatbot.notify.texts import text
from chatbot.store import Db, Store
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import reminders as reminder_store
from chatbot.store.cards import Card
from chatbot.store.proposals import Proposal
from chatbot.store.telemetry import RunRecord
from runners.runtimes import Limited

NUMBER_KEYS = ("1️⃣", "2️⃣", "3️⃣", "4️⃣")
A = Action
# A question is posted with the text for the move that asked it (default "question"),
# its options and "question_hint".
QUESTION_NOTICES: dict[Action, str] = {
    A.OPERATOR_FAILED: "question_operator_failed",
    A.OPERATOR_SPLIT_PLANNED: "question_split_plan",
}


@dataclass(frozen=True)
class Destination:
    transport: str
    room: str
    kind: str = "room"  # or "person": the console is one person's screen
    #: The owners a question here mentions (their ids on this transport).
    owners: tuple[str, ...] = ()


class Notifier:
    def __init__(
        self,
        store: Store,
        destinations: Sequence[Destination],
        locale: str = "en",
        *,
        prefix: str = "/",
        command_names: tuple[str, ...] = (),
        approval_timeout_s: float = 900.0,
        ask_timeout_s: float = 900.0,
        quiet: QuietHours | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.store = store
        self.destinations = list(destinations)
        self.locale = locale
        # Commands the notices suggest are shown with the first configured prefix.
        self.prefix = prefix
        self.command_names = command_names
        self.runs = RunStatus(self)
        self.talk = TalkNotices(self, approval_timeout_s)
        self.asks = AgentAskNotices(self, ask_timeout_s)
        self.quota = QuotaNotices(self)
        self.card_notices = CardNotices(self)
        self.quiet = quiet
        self.clock = clock

    # --- posting ----------------------------------------------------------------

    async def post(
        self,
        db: Db,
        body: str,
        *,
        card: Card | None,
        purpose: str,
        question_id: int | None = None,
        mention_owners: bool = False,
        talk_id: int | None = None,
        attachment_id: int | None = None,
        proposal_id: int | None = None,
    ) -> list[tuple[int, chat_store.Post]]:
        """One post per room (and the draft's own direct chat); the rows and what they hold.

        Only a question mentions anyone: the owners of each room, so their phones ring.
        In quiet hours it mentions nobody; the mention waits for their end (reminders.py).
        """
        if mention_owners and self.quiet is not None and self.quiet.is_quiet(now := self.clock()):
            mention_owners = False
            if question_id is not None:
                await reminder_store.hold(db, reminder_store.QUESTION, question_id, now)
            elif talk_id is not None:
                await reminder_store.hold(db, reminder_store.APPROVAL, talk_id, now)
        body = cut(commands_with(body, self.prefix, self.command_names), MAX_POST_CHARS, " …")
        targets = [(d.transport, d.kind, d.room, d.owners) for d in self.destinations]
        origin = card.data.origin if card else None
        if origin is not None and origin["target_kind"] == "person":
            mine = (origin["transport"], "person", origin["target"])
            if mine not in [target[:3] for target in targets]:
                targets.append((*mine, ()))
        posted = []
        for transport, kind, target, owners in targets:
            post = chat_store.Post(
                transport=transport,
                target=target,
                target_kind=kind,
                text=body,
                html=html_for(transport, body),
                card_id=card.id if card else None,
                question_id=question_id,
                talk_id=talk_id,
                attachment_id=attachment_id,
                proposal_id=proposal_id,
                purpose=purpose,
                mentions=owners if mention_owners and kind == "room" else (),
            )
            posted.append((await chat_store.enqueue(db, post), post))
        return posted

    def t(self, key: str, **values: object) -> str:
        return text(self.locale, key, **values)

    # --- board changes (inside the change's transaction) ----------------------------

    async def __call__(self, db: Db, change: Change) -> None:
        body = self.card_notices.render(change)
        card = change.card
        if body:
            await self.post(db, body, card=card, purpose=f"card:{change.action}")
        for offered in change.details.get("artifacts") or ():
            # Files the run's report offers, each as a file of its own after the notice.
            said = self.t("artifact", slug=card.slug, name=offered["name"])
            await self.post(db, said, card=card, purpose="artifact", attachment_id=offered["id"])
        if change.question is not None:
            question = change.question
            # Change.action is the Action's value; Action is a StrEnum, so the str finds it.
            key = QUESTION_NOTICES.get(change.action, "question")  # type: ignore[call-overload]
            lines = [self.t(key, slug=card.slug, text=question.text)]
            lines += [f"{NUMBER_KEYS[i]} {option}" for i, option in enumerate(question.options)]
            if change.action != A.OPERATOR_SPLIT_PLANNED:  # its text names the ways itself
                lines.append(self.t("question_hint", slug=card.slug))
            await self.post(
                db,
                "\n".join(lines),
                card=card,
                purpose="question",
                question_id=question.id,
                mention_owners=True,
            )

    async def said_on_web(self, db: Db, post: chat_store.Post) -> None:
        """The answer to an owner's action on the web board, said where the card's
        notices go (board/tx.py: `page_echo`): the chat stays the record of what was done.
        A refusal changed nothing and is the page's alone."""
        if post.purpose == "refusal":
            return
        card = await card_store.get_by_id(db, post.card_id) if post.card_id else None
        await self.post(db, post.text, card=card, purpose="web")

    # --- what the worker tells (chatbot/board/run_events.py) ------------------------------

    async def hear(self, event: RunEvent) -> None:
        """Each event to its notice; a new event not placed here is a type error."""
        match event:
            case RunStarted(card, role, runtime, model, job_id):
                await self.run_started(card, role, runtime, model, job_id)
            case RunProgress(card, job_id, role, elapsed, step):
                await self.run_progress(card, job_id, role, elapsed, step)
            case RunFinished(card, record):
                await self.run_finished(card, record)
            case ProviderLimited(card, runtime, limited, fell_back, at):
                await self.run_limited(card, runtime, limited, fell_back, at)
            case RunNote(card, job_id, key, values):
                await self.run_note(card, job_id, key, values)
            case ChecksFinished():
                pass  # the card's phase and /status say it; /metrics counts it
            case ChecksSentBack(card, record, role, iteration, limit):
                await self.checks_sent_back(card, record, role, iteration, limit)
            case ApprovalRequested(card, row, why):
                await self.approval_asked(card, row, why)
            case ApprovalTimedOut(card, row, why):
                await self.approval_timed_out(card, row, why)
            case ApprovalFlood(card, row, why):
                await self.approval_flood(card, row, why)
            case SteerRefused(card, row, why):
                await self.steer_refused(card, row, why)
            case AgentAsked(card, question):
                await self.agent_asked(card, question)
            case AgentAskTimedOut(card, question, why):
                await self.agent_ask_timed_out(card, question, why)
            case AgentAskClosed(card, question, why):
                await self.agent_ask_closed(card, question, why)
            case AgentProposed(card, proposal):
                await self.agent_proposed(card, proposal)
            case BudgetHeld(state):
                await self.budget_held(state)
            case _:
                assert_never(event)

    # --- model runs (from the worker): one status message per job, edited ---------------

    async def budget_held(self, state: BudgetState) -> None:
        """Today's budget is spent: queued runs wait (posted once per day and allowance)."""
        async with self.store.transaction() as db:
            body = self.t(
                "budget_held",
                spent=usd(state.spent),
                limit=usd(state.limit),
                budget=usd(state.budget),
                setting=state.key,
            )
            await self.post(db, body, card=None, purpose="budget")

    async def run_started(
        self, card: Card, role: str, runtime: str, model: str, job_id: int
    ) -> None:
        await self.runs.started(card, role, runtime, model, job_id)

    async def run_progress(
        self, card: Card, job_id: int, role: str, elapsed: float, step: str | None
    ) -> None:
        await self.runs.progress(card, job_id, role, elapsed, step)

    async def run_finished(self, card: Card, record: RunRecord) -> None:
        self.quota.finished(record)
        await self.runs.finished(card, record)

    async def run_limited(
        self,
        card: Card,
        runtime: str,
        limited: Limited,
        fell_back: bool,
        at: float | None = None,
    ) -> None:
        await self.quota.limited(card, runtime, limited, fell_back, at)

    async def checks_sent_back(
        self, card: Card, record: dict[str, Any], role: str, iteration: int, limit: int
    ) -> None:
        await self.runs.checks_sent_back(card, record, role, iteration, limit)

    async def run_note(self, card: Card, job_id: int, key: str, values: dict[str, Any]) -> None:
        await self.runs.note(card, job_id, self.t(key, **values))

    # --- talking to running agents (from the worker) -------------------------------

    async def approval_asked(self, card: Card, row: TalkRow, why: str) -> None:
        await self.talk.approval_asked(card, row, why)

    async def approval_timed_out(self, card: Card, row: TalkRow, why: str) -> None:
        await self.talk.approval_timed_out(card, row, why)

    async def approval_flood(self, card: Card, row: TalkRow, why: str) -> None:
        await self.talk.approval_flood(card, row, why)

    async def steer_refused(self, card: Card, row: TalkRow, why: str) -> None:
        await self.talk.steer_refused(card, row, why)

    # --- a working agent's questions and proposals (notify/agent_asks.py) ----------

    async def agent_asked(self, card: Card, question: QuestionRow) -> None:
        await self.asks.asked(card, question)

    async def agent_ask_timed_out(self, card: Card, question: QuestionRow, why: str) -> None:
        await self.asks.timed_out(card, question, why)

    async def agent_ask_closed(self, card: Card, question: QuestionRow, why: str) -> None:
        await self.asks.closed(card, question, why)

    async def agent_proposed(self, card: Card, proposal: Proposal) -> None:
        await self.asks.proposed(card, proposal)
