"""A stateful property test of the whole bot: no dead ends, nothing done to the wrong card.

Hypothesis plays the owner and the agents against the real store, board service,
worker, notifier, outbox and chat service, with the fake CLIs doing the runs:
commands on random cards (unknown ones too), replies to and reactions on whatever
the bot posted, runs that answer well, answer nonsense, exit 1 or hang, and crashes
of the whole bot between steps or in the middle of a run. After every step:

- at most one queued or running job per card;
- a card in a running phase has a queued or running job (in a lane a worker claims);
- no outbox row was delivered twice (the transport's own record, across restarts);
- no question is open on a card that left the phase that asked it;
- every failed or needs-human card has an owner command besides /archive and /inspect
  that the transition table allows, and each of them really moves the card (tried in
  a transaction that is rolled back).

Besides, no step may fail inside: the chat never answers "internal error", and no
run's result is refused or crashes the worker (the result would be lost).

Steps and examples: STATEFUL_EXAMPLES and STATEFUL_STEPS (defaults keep CI fast);
STATEFUL_SEED=random explores new sequences instead of the fixed derandomized ones;
STATEFUL_SHRINK=1 shrinks a failing sequence (minutes).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import hypothesis
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from chatbot.chat.commands import FOR_ACTION
from chatbot.chat.texts import say
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action, allowed_actions
from chatbot.store import cards as card_store
from chatbot.store.jobs import Job
from tests.pipeline import stateful_checks as checks
from tests.pipeline.stateful_answers import outcomes
from tests.pipeline.stateful_world import World, fake_cli_env
from tests.pipeline.support import kill_strays

# What one step does, weighted by repetition: while jobs wait, mostly single runs
# whose outcome the test picks.
AGENT_STEPS = ["run"] * 8 + ["owner acts meanwhile", "worker loop"]
OWNER_STEPS = ["allowed command"] * 3 + ["any command"] * 2 + ["plain message"]
CRASHES = ("with a run in flight", "after a claim", "between steps")
COMMANDS = (
    "start", "start", "start", "split", "answer", "retry", "cancel", "fix", "inspect",
    "archive", "deploy", "draft", "research",
)  # fmt: skip
RECENT = 3
UNKNOWN = ("no-such-card", "alpah")
REACTIONS = ("🔁", "✂️", "🗄️", "👍", "👎", "1️⃣", "2️⃣", "3️⃣", "4️⃣")
WORDS = ("Local disk", "yes", "CSV", "keep it simple", "2")
INTERNAL_ERROR = say("en", "internal_error")


@dataclass
class Seen:
    """The board after the last step, for preconditions and draws."""

    slugs: list[str] = field(default_factory=list)
    lanes: list[str] = field(default_factory=list)
    messages: list[int] = field(default_factory=list)
    stuck: list[tuple[str, Phase, list[Action]]] = field(default_factory=list)
    allowed: list[tuple[str, list[Action]]] = field(default_factory=list)


class BoardMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="stateful-"))
        self.world = World(self.root)
        self.env = contextlib.ExitStack()
        self.env.enter_context(fake_cli_env(self.world))
        self.loop = asyncio.new_event_loop()
        self.seen = Seen()
        self.reported = 0
        try:
            self.run(self.world.boot())
            self.settle()
        except BaseException:
            self.teardown()
            raise

    def run(self, coroutine):
        return self.loop.run_until_complete(coroutine)

    def teardown(self) -> None:
        try:
            if self.world.bot is not None:
                self.run(self.world.shutdown())
        finally:
            kill_strays(self.world)
            self.loop.close()
            self.env.close()
            shutil.rmtree(self.root, ignore_errors=True)

    # --- after every step -----------------------------------------------------------

    def settle(self) -> None:
        """Deliver what is due, check the step did not crash inside, note the board."""
        self.run(self.world.deliver())
        fresh = self.world.delivered[self.reported :]
        self.reported = len(self.world.delivered)
        assert not [d.text for d in fresh if d.text == INTERNAL_ERROR], "the chat crashed"
        self.run(self._note())

    async def _note(self) -> None:
        reader = self.world.live.store.reader
        crashed = await reader.fetchall(
            "SELECT id, kind, error FROM jobs WHERE error LIKE 'internal error%' "
            "OR error LIKE 'result not applied%'"
        )
        assert not [tuple(r) for r in crashed], "a run's result was lost"
        cards = await card_store.all_cards(reader)
        self.seen.slugs = sorted(c.slug for c in cards)
        self.seen.lanes = sorted({job.lane for job in await self.world.queued()})
        # Newest first and counted thrice: an owner mostly answers what the bot just said,
        # about the cards that just moved.
        messages = [n for n, *_ in await self.world.bot_messages()][::-1]
        self.seen.messages = messages[:RECENT] * 2 + messages
        self.seen.stuck = [
            (c.slug, c.phase, checks.ways_forward(c)) for c in cards if c.phase in checks.STUCK
        ]
        allowed = [
            (c.slug, actions)
            for c in sorted(cards, key=lambda c: c.updated_at, reverse=True)
            if (actions := allowed_actions(c.phase, c.kind, c.failure_stage))
        ]
        self.seen.allowed = allowed[:RECENT] * 2 + allowed
        for card in cards:
            event(f"reached {card.phase.value}")

    def said(self, line: str) -> None:
        self.run(self.world.say(line))
        self.settle()

    # --- the one rule ------------------------------------------------------------------
    # One rule that draws what happens, so the mix is ours: with several rules hypothesis
    # switches whole rules off per example (swarm testing), and an example of nothing but
    # crashes or chatter finds little. The first choice of every draw is the productive
    # one (a run answering well, /start), which is where shrinking heads.

    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        choices = list(AGENT_STEPS if self.seen.lanes else ())
        choices += OWNER_STEPS if self.seen.allowed else OWNER_STEPS[-3:]
        choices += ["way forward"] * 2 if self.seen.stuck else []
        choices += ["reply", "react"] * 2 if self.seen.messages else []
        choices += ["crash"] * (2 if self.seen.lanes else 1)
        how = data.draw(st.sampled_from(choices), label="step")
        event(how)
        if how == "run":
            self._run_a_job(data)
        elif how == "owner acts meanwhile":
            self._owner_acts_during_a_run(data)
        elif how == "worker loop":
            self._worker_drains_a_lane(data)
        elif how == "allowed command":
            self._allowed_command(data)
        elif how == "any command":
            self._command(data)
        elif how == "plain message":
            self.said(data.draw(st.sampled_from(WORDS), label="text"))
        elif how == "way forward":
            self._take_a_way_forward(data)
        elif how == "reply":
            number = data.draw(st.sampled_from(self.seen.messages), label="to message")
            self.said(f">{number} " + data.draw(st.sampled_from(WORDS), label="text"))
        elif how == "react":
            number = data.draw(st.sampled_from(self.seen.messages), label="on message")
            self.said(f"+{number} " + data.draw(st.sampled_from(REACTIONS), label="reaction"))
        else:
            crashes = CRASHES if self.seen.lanes else CRASHES[-1:]
            self._crash(data.draw(st.sampled_from(crashes), label="crash"), data)

    def _crash(self, how: str, data: st.DataObject) -> None:
        """The bot process dies (after claiming a job, or with an agent at work) and starts
        again on the same database, as `chatbot.app.startup.Running.prepare` recovers."""

        event(f"crash {how}")

        async def crash() -> None:
            if how != "between steps":
                lane = data.draw(st.sampled_from(self.seen.lanes), label="lane")
                job = await self.world.claim(lane)
                if how == "with a run in flight" and job.kind != "deploy":
                    turn, fifo, _gate = self.world.gate({"answer": "", "hang": "before_output"})
                    self.world.script(job, turn)
                    run = asyncio.ensure_future(self.world.execute(job))
                    if await self.world.started(fifo, run):
                        run.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await run
                    fifo.close()
            await self.world.shutdown()
            await self.world.boot()

        self.run(crash())
        self.settle()

    # --- the owner --------------------------------------------------------------------

    def _slug(self, data: st.DataObject) -> str:
        return data.draw(st.sampled_from([*self.seen.slugs, *UNKNOWN]), label="slug")

    def _command(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(COMMANDS), label="command")
        if name == "draft":
            self.said("/draft " + data.draw(st.sampled_from(WORDS), label="text"))
            return
        line = f"/{name} {self._slug(data)}"
        if name == "answer":
            line += " " + data.draw(st.sampled_from(WORDS), label="text")
        elif name == "inspect":
            line += data.draw(st.sampled_from(("", " status", " route")), label="mode")
        self.said(line)

    def _allowed_command(self, data: st.DataObject) -> None:
        """What the table allows on a card now (an owner who reads the answers)."""
        slug, allowed = data.draw(st.sampled_from(self.seen.allowed), label="card")
        action = data.draw(st.sampled_from(allowed), label="allowed")
        line = f"/{FOR_ACTION[action].name} {slug}"
        if action is Action.ANSWER:
            line += " " + data.draw(st.sampled_from(WORDS), label="text")
        elif action is Action.INSPECT:
            line += data.draw(st.sampled_from(("", " status", " route")), label="mode")
        self.said(line)

    def _take_a_way_forward(self, data: st.DataObject) -> None:
        slug, phase, actions = data.draw(st.sampled_from(self.seen.stuck), label="stuck card")
        action = data.draw(st.sampled_from(actions), label="way forward")
        line = f"/{FOR_ACTION[action].name} {slug}"
        if action is Action.ANSWER:
            line += " here is more context"
        seen = len(self.world.delivered)
        self.said(line)
        card = self.run(self.world.live.running.board.reads.card(slug))
        answers = [d.text for d in self.world.delivered[seen:]]
        assert card.phase is not phase, (line, answers)

    # --- the agents ---------------------------------------------------------------------

    async def _role(self, job: Job) -> str:
        if job.kind not in ("planner", "inspector"):
            return job.kind
        card = await card_store.get_by_id(self.world.live.store.reader, job.card_id)
        assert card is not None
        if job.kind == "planner":
            return "draft" if card.kind is Kind.DRAFT else "split"
        mode = job.payload.get("mode") or card.data.inspect_mode
        return "inspector_route" if mode == "route_next" else "inspector_status"

    def _next_run(self, data: st.DataObject) -> tuple[Job, dict | None, int]:
        """The next job of a lane, claimed, and what its run will answer."""
        lane = data.draw(st.sampled_from(self.seen.lanes), label="lane")
        job = self.run(self.world.claim(lane))
        role = self.run(self._role(job))
        outcome = data.draw(st.sampled_from(outcomes(role)), label=f"{role} outcome")
        event(f"{role} {outcome}")
        turn = None if job.kind == "deploy" else self.world.answers.turn(role, outcome)
        return job, turn, int(outcome == "exit1")

    def _run_a_job(self, data: st.DataObject) -> None:
        job, turn, deploy_exit = self._next_run(data)
        self.world.script(job, turn, deploy_exit)
        self.run(self.world.execute(job))
        self.settle()

    def _owner_acts_during_a_run(self, data: st.DataObject) -> None:
        """The owner acts while an agent is at work: on its card (what the table allows
        there, or anything), or on another card."""
        job, turn, deploy_exit = self._next_run(data)
        fifo = gate = None
        if turn is not None:
            turn, fifo, gate = self.world.gate(turn)
        self.world.script(job, turn, deploy_exit)
        card = self.run(card_store.get_by_id(self.world.live.store.reader, job.card_id))
        allowed = allowed_actions(card.phase, card.kind, card.failure_stage)
        names = [FOR_ACTION[a].name for a in allowed if a is not Action.ANSWER] + list(COMMANDS)
        name = data.draw(st.sampled_from(names), label="command meanwhile")
        other = data.draw(st.booleans(), label="on another card")
        slug = self._slug(data) if other else card.slug
        line = f"/{name} {slug}" + (" yes" if name in ("answer", "draft") else "")

        async def interleave() -> None:
            if fifo is None:  # a deploy: no agent to wait for, the job is claimed already
                await self.world.say(line)
            run = asyncio.ensure_future(self.world.execute(job))
            try:
                if fifo is not None:
                    await self.world.started(fifo, run)
                    await self.world.say(line)
                await self.world.notice_cancelled(job, run)
            finally:
                if gate is not None:
                    gate.touch()
                with contextlib.suppress(asyncio.CancelledError):
                    await run
                if fifo is not None:
                    fifo.close()

        self.run(interleave())
        self.settle()

    def _worker_drains_a_lane(self, data: st.DataObject) -> None:
        """The worker's own dispatch loop, every run answering well, until the lane is
        empty. One lane, one run at a time: runs in parallel would finish in an order
        of their own, and hypothesis needs each step to end the same way every time."""
        lane = data.draw(st.sampled_from(self.seen.lanes), label="lane")
        self.world.script_all_ok()
        worker = self.world.live.worker
        lanes, worker.lanes = worker.lanes, {lane: 1}
        try:
            self.run(asyncio.wait_for(worker.run(until_idle=True), 60))
        finally:
            worker.lanes = lanes
        self.settle()

    # --- invariants -----------------------------------------------------------------------

    @property
    def _reader(self):
        return self.world.live.store.reader

    @invariant()
    def one_active_job_per_card(self) -> None:
        found = self.run(checks.cards_with_two_jobs(self._reader))
        assert not found, f"cards with more than one queued or running job: {found}"

    @invariant()
    def running_phase_has_a_job(self) -> None:
        found = self.run(checks.running_without_a_job(self._reader, self.world.live.worker.lanes))
        assert not found, f"cards in a running phase that nothing will run: {found}"

    @invariant()
    def no_outbox_row_sent_twice(self) -> None:
        found = self.run(checks.outbox_problems(self._reader, self.world.delivered))
        assert not found, f"outbox: {found}"

    @invariant()
    def no_question_open_after_its_phase(self) -> None:
        found = self.run(checks.stale_questions(self._reader))
        assert not found, f"questions open on cards that left the phase that asked: {found}"

    @invariant()
    def every_stuck_card_has_a_way_forward(self) -> None:
        found = self.run(checks.dead_ends(self.world.live.running.board))
        assert not found, f"dead ends: {found}"


BoardMachine.TestCase.settings = settings(
    # Few but long sequences: the interesting states (a deploy waiting, a failure
    # answered after a restart) lie many runs deep. About 30 s on a busy 2-core machine.
    max_examples=int(os.environ.get("STATEFUL_EXAMPLES", "7")),
    stateful_step_count=int(os.environ.get("STATEFUL_STEPS", "50")),
    deadline=None,
    derandomize=os.environ.get("STATEFUL_SEED") != "random",
    suppress_health_check=list(HealthCheck),
    print_blob=True,
    # A failing sequence is reported as found: shrinking one of real runs takes minutes
    # (hypothesis gives up after five). STATEFUL_SHRINK=1 shrinks it anyway.
    phases=[
        p
        for p in hypothesis.Phase
        if p is not hypothesis.Phase.shrink or os.environ.get("STATEFUL_SHRINK")
    ],
)
TestBoardMachine = BoardMachine.TestCase
