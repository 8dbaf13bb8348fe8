"""The board's moves: the application core every front end (chat, CLI, worker) talks to.

It knows cards, phases, jobs and questions; it knows nothing of XMPP, Matrix or the
console. Each public method is one transaction: the card's move, its event, the job
it queues, the question it asks, the files it writes and the notifications it
produces land together or not at all.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Unpack, cast

from chatbot.board import fanout, importer, split_plan
from chatbot.board.acting import new_pipeline_id, owner_changes
from chatbot.board.agent_asks import AgentAsks
from chatbot.board.attachments import BoardFiles, FileLimits
from chatbot.board.budget import BoardBudget
from chatbot.board.change import APPLIED_ONLY, Applied, Change
from chatbot.board.comments import BoardComments
from chatbot.board.failures import SYSTEM_ACTOR, RunFailures
from chatbot.board.files import StagedFiles
from chatbot.board.queue import BoardQueue
from chatbot.board.reads import BoardReads
from chatbot.board.routines import BoardRoutines
from chatbot.board.split_plan import NewChild
from chatbot.board.talk import BoardTalk
from chatbot.board.tx import BoardError, BoardTx, PageEcho
from chatbot.board.web_reads import WebReads
from chatbot.board.web_sessions import WebSessions
from chatbot.domain import checks
from chatbot.domain.budgets import Budgets
from chatbot.domain.phases import QUESTION_KIND, QUESTION_PHASES, Kind, Phase
from chatbot.domain.roles import DEPLOY_JOB, FOR_PHASE
from chatbot.domain.transitions import Action, By
from chatbot.store import Db, Store, kv, telemetry
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import comments as comment_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.store.card_data import Answer, CardData, origin_record
from chatbot.store.cards import Card, CardChanges
from chatbot.store.chat import Post
from chatbot.store.jobs import ActiveJobExists, Job, JobState
from chatbot.store.questions import QuestionRow

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "BoardError",
    "NewChild",
]

log = logging.getLogger(__name__)
# The last draft number given (moves.draft): never given again.
DRAFT_NUMBER_KEY = "board:last_draft_number"


Listener = Callable[[Db, Change], Awaitable[None]]
# Moves that bring a run's commit.
_ANSWERING = frozenset({Action.BUILD_COMMITTED, Action.FIXER_COMMITTED})
# Chat's part of a move: its answer, written in the move's own transaction.
Along = Callable[[BoardTx, Change], Awaitable[None]]


class BoardService:
    def __init__(
        self,
        store: Store,
        repo: Path,
        *,
        default_lane: str = "light",
        deploy_configured: bool = False,
        budgets: Budgets | None = None,
        files: FileLimits | None = None,
        max_open_questions: int = 3,
    ):
        self.store = store
        self.repo = repo
        self.default_lane = default_lane
        self.deploy_configured = deploy_configured
        # The files it keeps, where, and how many ([files]; board/attachments.py).
        self.files = BoardFiles(store, files or FileLimits())
        # The board seen: cards, views, questions, runs (board/reads.py)...
        self.reads = BoardReads(store, repo)
        # ... and as the web board shows it (board/web_reads.py).
        self.web = WebReads(store, repo, deploy_configured=deploy_configured)
        self.listeners: list[Listener] = []
        # Tells the card's rooms what an owner did from the web board's page (tx.py).
        self.page_echo: PageEcho | None = None
        # Who is signed in to the web board (links from /web, sessions).
        self.web_sessions = WebSessions(store)
        # A working agent's questions and proposals (board/agent_asks.py).
        # Spending against the budgets, and the moves a budget makes (board/budget.py).
        self.budget = BoardBudget(
            store, budgets or Budgets(), default_lane=default_lane, announce=self.announce
        )
        # The worker's queue: claims, leases, workers, a run's own rows (board/queue.py).
        self.queue = BoardQueue(store, default_lane=default_lane)
        # Failed and orphaned runs (board/failures.py).
        self.failures = RunFailures(store, announce=self.announce)
        # Talking with a running agent: steers, interrupts, approvals (board/talk.py).
        self.talk = BoardTalk(store, page_echo=lambda: self.page_echo)
        # Owners' comments on lines of a card's change (board/comments.py).
        self.comments = BoardComments(
            store,
            queue_run=self._queue_run,
            announce=self.announce,
            change=self.reads.change,
            page_echo=lambda: self.page_echo,
        )
        # Commands on a schedule (board/routines.py).
        self.routines = BoardRoutines(store)
        self.asks = AgentAsks(
            store, repo, max_open_questions=max_open_questions, page_echo=lambda: self.page_echo
        )

    # --- importing ------------------------------------------------------------

    async def import_cards(self) -> importer.ImportReport:
        files, rejected = importer.scan(self.repo)
        report = importer.ImportReport(rejected=list(rejected))
        async with self.store.transaction() as db:
            await importer.import_files(db, files, report)
        for path, why in report.rejected:
            log.warning("not imported: %s: %s", path, why)
        return report

    # --- owner actions --------------------------------------------------------

    async def act(
        self,
        slug: str,
        action: Action,
        *,
        actor: str,
        reason: str = "",
        payload: dict[str, Any] | None = None,
        along: Along | None = None,
        **changes: Any,
    ) -> Card:
        """An owner's action. Authority is checked by the caller; legality here.

        `along` runs inside the same transaction with the change (the chat layer
        writes its answer there, so the move and the reply commit together).
        """
        files: StagedFiles | None = None  # an approved split plan's intent files
        try:
            async with self.store.transaction() as db:
                before = await card_store.require(db, slug)
                changes = {**owner_changes(before, action, payload), **changes}
                card = await card_store.transition(
                    db, slug, action, actor=actor, by=By.OWNER, reason=reason, **changes
                )
                if action is Action.CONFIRM:
                    files = await split_plan.make(db, self.repo, card, self._create_children)
                if action is Action.CANCEL:
                    active = await job_store.active_for_card(db, card.id)
                    if active is not None:
                        await job_store.cancel(db, active.id, f"cancelled by {actor}")
                elif action is Action.ARCHIVE:
                    await self._drop_queued(db, card, actor)
                elif action is Action.DEPLOY or (
                    card.phase is Phase.READY_FOR_DEPLOYMENT and action is Action.RETRY
                ):
                    skip = bool(payload and payload.get("skip_checks"))
                    await self.queue_deploy(
                        db, card, retry=action is Action.RETRY, skip_checks=skip
                    )
                else:
                    await self._queue_run(db, card, payload)
                change = await self.announce(db, before, card, action, actor, reason)
                if along is not None:
                    await along(BoardTx(db, self.page_echo), change)
                if files is not None:
                    files.commit()  # last step before COMMIT, as in apply()
                return card
        except BaseException:
            if files is not None:
                files.discard()  # staged, or placed before a COMMIT that failed
            raise

    async def answer(
        self,
        slug: str,
        text: str,
        *,
        actor: str,
        question_id: int | None = None,
        along: Along | None = None,
    ) -> tuple[Card, QuestionRow | None]:
        """Resolve the card's open question with the owner's answer; the pipeline goes on.

        A card waiting in a question phase takes an answer even when its question
        row is gone (cancelled by an earlier move): the answer is what it waits for.
        """
        async with self.store.transaction() as db:
            before = await card_store.require(db, slug)
            question = (
                await question_store.get(db, question_id)
                if question_id is not None
                else await question_store.open_for_card(db, before.id)
            )
            if question is not None and question.card_id != before.id:
                question = None
            if question is not None and question.kind == question_store.AGENT:
                # A working agent's question moves nothing: board.asks.answer takes it.
                raise BoardError(f"card '{slug}' waits on its running agent's question")
            if question is None and before.phase not in QUESTION_PHASES:
                raise BoardError(f"card '{slug}' has no open question")
            answered = None
            if question is not None:
                answered = await question_store.resolve(db, question.id, text, actor)
            log_entry: Answer = {
                "kind": question.kind if question else QUESTION_KIND[before.phase],
                "question": question.text if question else "",
                "answer": text,
                "by": actor,
            }
            data = before.data.updated(answers=[*before.data.answers, log_entry])
            if before.kind is Kind.DRAFT:
                data = data.updated(conversation=[*data.conversation, ("owner", text)])
            card = await card_store.transition(
                db, slug, Action.ANSWER, actor=actor, by=By.OWNER, reason="answered", data=data
            )
            await self._queue_run(db, card, {"answer": text})
            change = await self.announce(db, before, card, Action.ANSWER, actor, "answered")
            if along is not None:
                await along(BoardTx(db, self.page_echo), change)
            return card, answered

    async def start_draft(
        self,
        text: str,
        *,
        actor: str,
        origin: dict[str, str] | None = None,
        along: Along | None = None,
    ) -> Card:
        """A new intake dialogue: a draft card and its first planner turn.

        `origin` (transport, target_kind, target) is the chat it started in; its
        questions go there too, so a dialogue begun in a direct chat stays there.
        """
        async with self.store.transaction() as db:
            # A draft's number is never given again, even after the draft became a card
            # of its own name: /card/draft-1 always means the first draft.
            row = await db.fetchone("SELECT count(*) FROM cards WHERE kind = 'draft'")
            last = await kv.get_value(db, DRAFT_NUMBER_KEY)
            number = max(int(last or 0), row[0] if row else 0) + 1
            slug = f"draft-{number}"
            while await card_store.get(db, slug) is not None:
                number += 1
                slug = f"draft-{number}"
            await kv.set_value(db, DRAFT_NUMBER_KEY, str(number))
            card = await card_store.create(
                db,
                slug,
                Kind.DRAFT,
                Phase.DRAFT_RUNNING,
                actor=actor,
                action="draft",
                reason="intake dialogue started",
                title=text.splitlines()[0][:80] if text.strip() else slug,
                pipeline_run_id=new_pipeline_id(),
                data=CardData(
                    conversation=[("owner", text)], origin=origin_record(origin) if origin else None
                ),
            )
            await self._queue_run(db, card, None)
            change = await self.announce(db, None, card, Action.START, actor, "draft started")
            if along is not None:
                await along(BoardTx(db, self.page_echo), change)
            return card

    # --- chat's own writes ------------------------------------------------------

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[BoardTx]:
        """A transaction for chat's own records (a request and its announcement)."""
        async with self.store.transaction() as db:
            yield BoardTx(db, self.page_echo)

    async def post_alone(self, post: Post) -> None:
        """An answer that reports no change (a /status, a refusal): one statement."""
        await chat_store.enqueue_alone(self.store, post)

    # --- system actions: the worker applying a validated result ---------------

    async def apply(
        self,
        slug: str,
        action: Action,
        /,
        *,
        job: Job | None = None,
        worker: str | None = None,
        accepted_run: tuple[int, str | None] | None = None,
        **applied: Unpack[Applied],
    ) -> Card:
        """Apply one validated result: finish the job, move the card, write its files.

        `accepted_run`: the telemetry row whose answer this applies (and the review
        decision it gave), marked accepted in the same transaction."""
        reason = applied.get("reason", "")
        files = applied.get("files")
        question = applied.get("question")
        children = applied.get("children", ())
        deploy = applied.get("deploy", False)
        details = applied.get("details")
        rename_to = applied.get("rename_to")
        # The rest are the card's fields; Applied's own keys are set apart above.
        changes = cast(CardChanges, {k: v for k, v in applied.items() if k not in APPLIED_ONLY})
        if rename_to is not None:
            changes["slug"] = rename_to
        try:
            async with self.store.transaction() as db:
                if job is not None:
                    await job_store.complete(db, job.id, worker or "", result=action.value)
                if accepted_run is not None:
                    await telemetry.mark_accepted(db, *accepted_run)
                before = await card_store.require(db, slug)
                card = await card_store.transition(
                    db, slug, action, actor=SYSTEM_ACTOR, by=By.SYSTEM, reason=reason, **changes
                )
                await self._create_children(db, card, children)
                if action in _ANSWERING and card.commit_hash:
                    # The run's commit answers the comments it was given.
                    answered = await comment_store.answer_sent(db, card.id, card.commit_hash)
                    if answered:
                        details = {**(details or {}), "comments_answered": answered}
                asked = None
                if question is not None:
                    kind, text, options = question
                    asked = await question_store.ask(db, card.id, kind, text, options)
                if deploy:
                    await self.queue_deploy(db, card)
                else:
                    await self._queue_run(db, card, None)
                await self.announce(
                    db, before, card, action, SYSTEM_ACTOR, reason, asked, details or {}
                )
                if files is not None:
                    files.commit()  # last step before COMMIT; undone if COMMIT fails
                return card
        except BaseException:
            if files is not None:
                files.discard()
            raise

    async def queue_deploy(
        self, db: Db, card: Card, *, retry: bool = False, skip_checks: bool = False
    ) -> Job:
        """`skip_checks`: the owner said to deploy a commit whose checks did not pass."""
        if not card.commit_hash:
            raise BoardError(f"card '{card.slug}' has no reviewed commit to deploy")
        refusal = checks.deploy_refusal(card.data.checks, card.slug, card.commit_hash)
        if refusal and not skip_checks:
            raise BoardError(refusal)
        key = f"{card.slug}:{card.commit_hash}"
        if retry:
            # A failed deploy may be tried again; a successful one never runs twice.
            await db.execute(
                "UPDATE jobs SET idempotency_key = idempotency_key || ':failed:' || id "
                "WHERE idempotency_key = ? AND state IN ('failed', 'cancelled')",
                (key,),
            )
        job, created = await job_store.enqueue(
            db,
            kind=DEPLOY_JOB,
            lane=DEPLOY_JOB,
            card_id=card.id,
            payload={"commit": card.commit_hash},
            idempotency_key=key,
        )
        if not created:
            log.info("deploy of %s at %s was requested before", card.slug, card.commit_hash)
        return job

    async def _drop_queued(self, db: Db, card: Card, actor: str) -> None:
        """An archived card is done with: a deployment still queued for it never runs. One
        that runs already is not cut off half-way; the archive waits for it."""
        active = await job_store.active_for_card(db, card.id)
        if active is None:
            return
        if active.state is JobState.RUNNING:
            raise ActiveJobExists(card.id)
        await job_store.cancel(db, active.id, f"card archived by {actor}")

    async def _queue_run(self, db: Db, card: Card, payload: dict[str, Any] | None) -> Job | None:
        role = FOR_PHASE.get(card.phase)
        if role is None:
            return None
        job, _ = await job_store.enqueue(
            db,
            kind=role.name,
            lane=role.lane(card.lane, self.default_lane),
            card_id=card.id,
            payload={"phase": card.phase.value, "version": card.version, **(payload or {})},
        )
        return job

    async def _create_children(self, db: Db, parent: Card, children: Sequence[NewChild]) -> None:
        ids: dict[str, int] = {}
        for child in children:
            created = await card_store.create(
                db,
                child.slug,
                Kind.INTENT,
                Phase.PLANNED,
                actor=SYSTEM_ACTOR,
                action="split_child",
                reason=f"child of {parent.slug}",
                parent_id=parent.id,
                title=child.title,
                source_path=child.intent_path,
                # One pipeline: the children's runs are counted with their parent's.
                **{"pipeline_run_id": parent.pipeline_run_id, **child.fields},
            )
            ids[child.slug] = created.id
        for child in children:
            for blocker in child.blocked_by:
                await db.execute(
                    "INSERT INTO card_dependencies (card_id, blocked_by_id) VALUES (?, ?)",
                    (ids[child.slug], ids[blocker]),
                )
        # Only now that every dependency is recorded may the scheduler look at them.
        for child in children:
            stored = await card_store.get_by_id(db, ids[child.slug])
            assert stored is not None
            await self.announce(db, None, stored, Action.SPLIT_APPLIED, SYSTEM_ACTOR, "")

    async def announce(
        self,
        db: Db,
        before: Card | None,
        card: Card,
        action: Action,
        actor: str,
        reason: str,
        question: QuestionRow | None = None,
        details: dict[str, Any] | None = None,
    ) -> Change:
        """Tell the listeners (notifier, worker) of a move, inside its transaction, and
        move the fan-out on: children it unblocked start, a parent whose children are
        all done is done."""
        change = Change(before, card, action.value, actor, reason, question, details or {})
        for listener in self.listeners:
            await listener(db, change)

        async def moved_by_fanout(db: Db, prior: Card, after: Card, act: Action, why: str) -> None:
            await self._queue_run(db, after, None)
            for listener in self.listeners:
                await listener(db, Change(prior, after, act.value, SYSTEM_ACTOR, why))

        await fanout.progress(
            db, card, deploy_configured=self.deploy_configured, moved=moved_by_fanout
        )
        return change


def closest_slugs(wanted: str, known: Sequence[str], limit: int = 3) -> list[str]:
    return difflib.get_close_matches(wanted, list(known), n=limit, cutoff=0.5)
