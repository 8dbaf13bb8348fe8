"""A run's status message: posted when a job's first run starts, then edited in place.

Long agent runs (tens of minutes) used to show "started" and, much later, "ended".
Now each job gets one message per room that the bot edits as the run goes on
(XMPP message correction, Matrix m.replace, a new console line): phase, role,
elapsed time and the agent's latest step, at most every `progress_interval_s`
(the worker's ticker decides when); the last edit states the outcome. A builder's
further turns edit the same message. Edits go through the outbox like every post;
an older edit still waiting there is dropped for the newer one.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from chatbot.board import Card, RunRecord
from chatbot.notify.format import cut, duration, html_for, inert
from chatbot.notify.poster import Poster
from chatbot.store import Db
from chatbot.store import chat as chat_store


@dataclass
class _Status:
    """What the bot posted for one job's run(s), and what the next edit needs."""

    posted: list[tuple[int, chat_store.Post]]
    role: str
    runtime: str
    model: str
    turns: int = 1
    steps: list[str] = field(default_factory=list)
    #: What happened besides the agent's own steps (steered, an approval refused):
    #: the latest few, kept on the message to its end, so its final text still says
    #: who steered it even when an edit in between was superseded before it went out.
    notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    step: str | None = None


# How much of the first line of the checks' output a "sent back" message shows.
FIRST_LINE_CHARS = 200
# Notes shown on a run's message (steers and what became of them).
NOTES_KEPT = 4
# Jobs whose message may still be edited; older ones are done with long since.
KEPT_JOBS = 200


class RunStatus:
    def __init__(self, notifier: Poster):
        self.notifier = notifier
        self._jobs: OrderedDict[int, _Status] = OrderedDict()

    async def started(self, card: Card, role: str, runtime: str, model: str, job_id: int) -> None:
        status = self._jobs.get(job_id)
        model = model or self.notifier.t("model_default")
        text = self.notifier.t(
            "run_started", slug=card.slug, role=role, runtime=runtime, model=model
        )
        async with self.notifier.store.transaction() as db:
            if status is None:  # the job's first run: its message
                posted = await self.notifier.post(db, text, card=card, purpose="run")
                self._jobs[job_id] = _Status(posted, role, runtime, model)
                while len(self._jobs) > KEPT_JOBS:
                    self._jobs.popitem(last=False)
            else:  # a further turn of the same job: the same message says so
                status.turns += 1
                await self._edit(db, status, card, self._progress_text(card, status, 0.0, None))

    async def progress(
        self, card: Card, job_id: int, role: str, elapsed: float, step: str | None
    ) -> None:
        status = self._jobs.get(job_id)
        if status is None:
            return
        status.elapsed, status.step = elapsed, step or status.step
        async with self.notifier.store.transaction() as db:
            await self._edit(db, status, card, self._progress_text(card, status, elapsed, step))

    async def note(self, card: Card, job_id: int, note: str) -> None:
        """A line on the run's message at once (a steer sent, taken), not at the next tick."""
        status = self._jobs.get(job_id)
        if status is None:
            return
        status.notes = [*status.notes, note][-NOTES_KEPT:]
        text = self._progress_text(card, status, status.elapsed, status.step)
        async with self.notifier.store.transaction() as db:
            await self._edit(db, status, card, text)

    async def finished(self, card: Card, record: RunRecord) -> None:
        text = self._outcome_text(card, record)
        status = self._jobs.get(record.job_id) if record.job_id is not None else None
        if status is not None and status.notes:
            text += "\n" + "\n".join(status.notes)
        async with self.notifier.store.transaction() as db:
            if status is None:
                await self.notifier.post(db, text, card=card, purpose="run")
            else:
                await self._edit(db, status, card, text)

    async def checks_sent_back(
        self, card: Card, record: dict[str, Any], role: str, iteration: int, limit: int
    ) -> None:
        """The repository's checks failed on the agent's commit and it goes round again: a
        message of its own (the run's message keeps its steps), naming the commit, the
        iteration and the first line of the output's end, inert (the output is untrusted)."""
        tail = str(record.get("tail") or "")
        first = next((line.strip() for line in tail.splitlines() if line.strip()), "-")
        text = self.notifier.t(
            "checks_sent_back",
            slug=card.slug,
            verdict=record.get("verdict") or "failed",
            commit=str(record.get("commit") or "")[:12],
            role=role,
            iteration=iteration,
            limit=limit,
            line=inert(first, FIRST_LINE_CHARS),
        )
        async with self.notifier.store.transaction() as db:
            await self.notifier.post(db, text, card=card, purpose="checks")

    # --- texts ----------------------------------------------------------------------

    def _progress_text(self, card: Card, status: _Status, elapsed: float, step: str | None) -> str:
        t = self.notifier.t
        text = t(
            "run_progress",
            slug=card.slug,
            role=status.role,
            phase=card.phase.label(self.notifier.locale),
            elapsed=duration(elapsed),
            runtime=status.runtime,
            model=status.model,
        )
        if status.turns > 1:
            text += " " + t("run_turn", turn=status.turns)
        if step:
            text += "\n" + t("run_step", step=step)
        for note in status.notes:
            text += "\n" + note
        return text

    def _outcome_text(self, card: Card, record: RunRecord) -> str:
        tokens = (
            f"{record.input_tokens or 0} in / {record.output_tokens or 0} out tokens"
            if record.input_tokens is not None
            else "tokens unknown"
        )
        cost = ""
        if record.cost_usd is not None:
            # "~": priced from the tokens with the configured price, not the runtime's figure.
            cost = f", {'~' if record.cost_estimated else ''}${record.cost_usd:.4f}"
        key = "run_finished" if record.outcome == "ok" else "run_failed"
        return self.notifier.t(
            key,
            slug=card.slug,
            role=record.role,
            failure=cut(record.outcome, 160, " …"),
            duration=duration(record.duration_s),
            tokens=tokens,
            cost=cost,
        )

    async def _edit(self, db: Db, status: _Status, card: Card, text: str) -> None:
        for row_id, original in status.posted:
            await chat_store.enqueue(
                db,
                chat_store.Post(
                    transport=original.transport,
                    target=original.target,
                    target_kind=original.target_kind,
                    text=text,
                    html=html_for(original.transport, text),
                    card_id=card.id,
                    purpose="run",
                    replaces_id=row_id,
                ),
            )
