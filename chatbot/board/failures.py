"""Runs that ended without a usable result, recorded on their cards.

A failed run's card moves by the failure action of the phase it is in (the
domain's RUN_FAILURE table says which, and which stage the card then shows); a
failed operator run also asks the owner, so an answer or /retry moves it on. At
start, runs a crashed bot left behind are queued again or failed the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from chatbot.domain.transitions import RUN_FAILURE, Action, By
from chatbot.domain.ways import ways_forward
from chatbot.store import Db, Store, telemetry
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.store import talk as talk_store
from chatbot.store.cards import Card
from chatbot.store.jobs import Job

log = logging.getLogger(__name__)

#: Why what a recovered job's agent was told or asked is closed.
RUN_GONE = "the run ended when its worker stopped"

SYSTEM_ACTOR = "system"
# The question a failed operator run asks: its text is the failure.
OPERATOR_FAILED_QUESTION = "operator_failed"


class RunFailures:
    """The board's side of failed runs (`board.failures`): a run's job fails, its card says
    where and why; orphaned runs are recovered."""

    def __init__(self, store: Store, *, announce: Callable[..., Awaitable[Any]]):
        self.store = store
        # BoardService.announce: tells the listeners and moves the fan-out on.
        self.announce = announce

    async def fail(
        self,
        job: Job,
        worker: str,
        *,
        detail: str,
        details: dict[str, Any] | None = None,
        rejected_run: int | None = None,
    ) -> Card | None:
        """A run that produced nothing usable: the job fails, the card says where and why.

        `rejected_run`: the telemetry row of a run that ended well but whose answer
        this refuses; it is marked so in the same transaction."""
        async with self.store.transaction() as db:
            await job_store.fail(db, job.id, worker, detail)
            if rejected_run is not None:
                await telemetry.mark_rejected(db, rejected_run, detail)
            if job.card_id is None:
                return None
            return await self._fail_card(db, job.card_id, detail, details)

    async def recover(self, dead_owners: tuple[str, ...] = ()) -> list[job_store.Recovered]:
        """Orphaned runs (lease expired, owner gone) go back to the queue or fail their
        card clearly; at start, and now and then by every worker."""
        failed: dict[int, Card | None] = {}
        async with self.store.transaction() as db:
            recovered = await job_store.recover(db, dead_owners=dead_owners)
            for item in recovered:
                # Its agent is gone with its process group: nobody can answer it now.
                closed = await talk_store.close_for_job(db, item.job.id, RUN_GONE)
                if item.requeued or item.job.card_id is None:
                    continue
                reason = item.reason
                asked = [row for row in closed if row.kind == "approval"]
                if asked:
                    reason += f"; its approval request ({asked[-1].text[:60]}) was closed"
                failed[item.job.id] = await self._fail_card(db, item.job.card_id, reason)
        for item in recovered:
            ways = _ways_on(failed.get(item.job.id))
            log.warning(
                "recovered job %s (%s): %s%s", item.job.id, item.job.kind, item.reason, ways
            )
        return recovered

    async def _fail_card(
        self,
        db: Db,
        card_id: int,
        detail: str,
        details: dict[str, Any] | None = None,
    ) -> Card | None:
        """Record a run that ended without a usable result on its card, if it still waits."""
        before = await card_store.get_by_id(db, card_id)
        if before is None or before.phase not in RUN_FAILURE:
            return before
        failure = RUN_FAILURE[before.phase]
        card = await card_store.transition(
            db,
            before.slug,
            failure.action,
            actor=SYSTEM_ACTOR,
            by=By.SYSTEM,
            reason=detail,
            failure_stage=failure.stage.value,
            failure_detail=detail,
        )
        asked = None
        if failure.action is Action.OPERATOR_FAILED:
            # The owner's way on is an answer (more context) or /retry: both need
            # something to answer, in the room and on the card.
            asked = await question_store.ask(
                db, card.id, OPERATOR_FAILED_QUESTION, card.failure_detail or detail, []
            )
        await self.announce(
            db, before, card, failure.action, SYSTEM_ACTOR, detail, asked, details or {}
        )
        return card


def _ways_on(card: Card | None) -> str:
    """For the log line of a run the recovery failed: what the owner can do now."""
    actions = ways_forward(card.phase, card.failure_stage) if card is not None else ()
    if card is None or not actions:
        return ""
    commands = " or ".join(f"/{action.value} {card.slug}" for action in actions)
    return f"; {card.slug} is {card.phase.value}: {commands}"
