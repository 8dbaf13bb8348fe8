"""The bot the stateful test drives: the real store, board, worker, notifier, outbox and chat.

One `World` is one board database, repository and fake-CLI setup; a `Bot` is one life
of the bot process on it. A crash throws the Bot away and boots a new one on the same
database with a new instance id, recovering as `chatbot.app.startup.Running.prepare` does.

The console transport is the project's in-process transport; `RecordingConsole` only
adds a record of what it delivered (the outbox row's txn id with it), so the test can
prove that no row went out twice, across restarts too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatbot.app.startup import Running, make_board, make_worker
from chatbot.app.wiring import destinations
from chatbot.chat.intake import ChatIntake
from chatbot.config import parse_config
from chatbot.domain.roles import DEPLOY_JOB
from chatbot.notify.notifier import Notifier
from chatbot.notify.outbox import OutboxSender
from chatbot.pipeline.worker import Worker, current_branch
from chatbot.store import Store
from chatbot.store import chat as chat_store
from chatbot.store import jobs as job_store
from chatbot.store.jobs import Job
from chatbot.transports.base import Outgoing
from chatbot.transports.console import TRANSPORT, ConsoleSettings, ConsoleTransport
from tests.pipeline import harness
from tests.pipeline.stateful_answers import Answers
from tests.pipeline.support import Fifo

OWNER = "owner@example.org"
ACTOR = f"{TRANSPORT}:{OWNER}"
INTENTS = {
    "alpha": "# Alpha\n\nBuild alpha.\n",
    "beta": "# Beta\n\nBuild beta.\n",
    "gamma": "# Gamma\n\nBuild gamma.\n",
}
RESEARCH = {"delta": "# Which database for delta?\n"}
FAKE_ENV = ("FAKE_CLI_SCENARIO", "FAKE_CLI_STATE", "FAKE_CLI_LOG")


def config_text(root: Path) -> str:
    """The pipeline harness's configuration with a short no-output watchdog (a hang costs
    its seconds; a good run speaks within them even on a busy machine), a console owner
    and a deploy command whose exit status the test sets per run."""
    text = harness.CONFIG.format(bin=harness.BIN)
    text = text.replace("idle_timeout_s = 30\n", "").replace(
        "timeout_s = 30\n", "timeout_s = 20\nidle_timeout_s = 2\n"
    )
    script = root / "deploy.sh"
    script.write_text(f'#!/bin/sh\nexit "$(cat {root / "deploy-exit"} 2>/dev/null || echo 0)"\n')
    script.chmod(0o755)
    return text + (
        f'\n[console]\nowner = "{OWNER}"\n'
        f'\n[deploy]\ncommand = ["{script}", "{{commit}}", "{{slug}}"]\ntimeout_s = 20\n'
    )


@dataclass(frozen=True)
class Delivery:
    txn_id: str | None
    message_id: str
    text: str


class RecordingConsole(ConsoleTransport):
    def __init__(self, delivered: list[Delivery]):
        super().__init__(ConsoleSettings(owner=OWNER, bot_name="board"))
        self.delivered = delivered

    async def _send_text(self, message: Outgoing) -> str:
        message_id = await super()._send_text(message)
        while not self._said.empty():  # what was said is in `delivered`; keep it small
            self._said.get_nowait()
        self.delivered.append(Delivery(message.txn_id, message_id, message.text))
        return message_id


@dataclass
class Bot:
    running: Running
    chat: ChatIntake
    sender: OutboxSender
    console: RecordingConsole

    @property
    def store(self) -> Store:
        return self.running.store

    @property
    def worker(self) -> Worker:
        return self.running.worker


class World:
    """One board: its repository, configuration, fake-CLI files and what was delivered."""

    def __init__(self, root: Path):
        self.root = root
        self.repo = harness.make_repo(root, INTENTS)
        for slug, text in RESEARCH.items():
            path = self.repo / "docs" / "research-intent" / f"{slug}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        harness.git(self.repo, "add", "-A")
        harness.git(self.repo, "commit", "-q", "-m", "research question")
        path = root / "bot.toml"
        path.write_text(config_text(root))
        self.config = parse_config(path.read_text(), path)
        self.scenario = root / "scenario.json"
        self.state = root / "scenario.state.json"
        self.log = root / "calls.jsonl"
        self.answers = Answers()
        self.delivered: list[Delivery] = []
        self.bot: Bot | None = None
        # Worker instances of "processes" that ended (see shutdown).
        self.gone: list[str] = []
        self._fifos = 0

    def environ(self) -> dict[str, str]:
        """What the fake CLIs read (the runtimes pass these names through)."""
        return dict(zip(FAKE_ENV, map(str, (self.scenario, self.state, self.log)), strict=True))

    # --- one life of the bot ------------------------------------------------------

    async def boot(self) -> Bot:
        """What `chatbot.app.serve.serve` wires, in its order, minus the endless loops."""
        store = await Store.open(self.config.bot.database)
        if self.gone:
            # An ended process is gone from this host: what the next start sees of it
            # (`dead_on_host`), though here it was this very test process.
            marks = ", ".join("?" * len(self.gone))
            await store.write_one(
                f"UPDATE workers SET process = '0:0' WHERE id IN ({marks})", tuple(self.gone)
            )
        board = make_board(self.config, store)
        instance = uuid.uuid4().hex
        worker = make_worker(self.config, board, instance_id=instance)
        running = Running(self.config, store, board, worker, instance)
        notifier = Notifier(store, destinations(self.config), self.config.bot.locale)
        board.listeners.append(notifier)
        worker.observers.append(notifier)
        console = RecordingConsole(self.delivered)
        sender = OutboxSender(store, {TRANSPORT: console})
        # Owners here type faster than a person: no rate limit in the way.
        chat = ChatIntake.from_config(board, self.config, rate_capacity=1_000_000)
        chat.outbox_settled = sender.settled
        console.on_event(chat.handle)
        await running.prepare()
        # What Worker.run sets first; the test runs jobs one by one (see `execute`).
        worker.target_branch = await current_branch(self.config.bot.repo)
        await console.start()
        self.bot = Bot(running, chat, sender, console)
        await self.deliver()
        return self.bot

    async def shutdown(self) -> None:
        """The process ends: nothing is flushed, nothing is finished."""
        bot, self.bot = self.bot, None
        if bot is not None:
            self.gone.append(bot.worker.instance_id)
            await bot.console.stop()
            await bot.store.close()

    @property
    def live(self) -> Bot:
        assert self.bot is not None
        return self.bot

    # --- chat ---------------------------------------------------------------------

    async def say(self, line: str) -> list[Delivery]:
        """The owner types a line; what the bot answered (and announced) because of it."""
        seen = len(self.delivered)
        await self.live.console.push(line)
        await self.deliver()
        return self.delivered[seen:]

    async def deliver(self) -> None:
        """Send everything the outbox holds (the console takes every post at once)."""
        bot = self.live
        for _ in range(20):
            if not await chat_store.pending(bot.store.reader, TRANSPORT, limit=1):
                return
            await bot.sender.flush()
        raise AssertionError("the outbox does not empty")

    async def bot_messages(self) -> list[tuple[int, int | None, int | None]]:
        """(number, question id, card id) of what the bot posted in this console session."""
        console = self.live.console
        prefix = console.message_id("")
        rows = await self.live.store.reader.fetchall(
            "SELECT message_id, question_id, card_id FROM chat_messages "
            "WHERE transport = ? AND message_id LIKE ? ORDER BY id",
            (TRANSPORT, prefix + "%"),
        )
        return [(int(r[0].removeprefix(prefix)), r[1], r[2]) for r in rows]

    # --- runs -----------------------------------------------------------------------

    async def queued(self) -> list[Job]:
        return await job_store.listing(self.live.store.reader, ("queued",))

    async def claim(self, lane: str) -> Job:
        """Take the lane's next job exactly as the worker's dispatcher does."""
        bot = self.live
        async with bot.store.transaction() as db:
            job = await job_store.claim(db, lane, bot.worker.instance_id, bot.worker.lease_s)
        assert job is not None, lane
        return job

    def script(self, job: Job, turn: dict[str, Any] | None, deploy_exit: int = 0) -> None:
        """What the next run answers: one fake-CLI turn, or the deploy command's status."""
        if job.kind == DEPLOY_JOB:
            (self.root / "deploy-exit").write_text(f"{deploy_exit}\n")
            return
        self.scenario.write_text(json.dumps({"turns": [turn] if turn else []}))
        self.state.unlink(missing_ok=True)

    def script_all_ok(self) -> None:
        """Every role answers well, as often as asked (for the worker's own loop)."""
        a = self.answers
        turns = [
            {"match": "OPERATOR-DECISION", **a.turn("operator", "ok:direct")},
            {"match": "REVIEW-RESULT", **a.turn("reviewer", "ok:approve")},
            {"match": "SPLIT-REPORT", **a.turn("split", "ok:split")},
            {"match": "DRAFT-QUESTION", **a.turn("draft", "ok:question")},
            {"match": "INSPECTION_RESULT", **a.turn("inspector_status", "ok:status")},
            {"match": "ROUTING_RESULT", **a.turn("inspector_route", "ok:no_action")},
            {"match": "RESEARCH-REPORT", **a.turn("researcher", "ok:report")},
            # The fixer's prompt names the builder's markers too: it must match first.
            {"match": "FIXER-QUESTION", **a.turn("fixer", "ok:commit")},
            {"match": "COMMIT-MESSAGE", **a.turn("builder", "ok:commit")},
        ]
        self.scenario.write_text(json.dumps({"turns": [{**t, "repeat": True} for t in turns]}))
        self.state.unlink(missing_ok=True)
        (self.root / "deploy-exit").write_text("0\n")

    def calls(self) -> list[dict[str, Any]]:
        """Every fake-CLI call logged so far (support.kill_strays reads them)."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def gate(self, turn: dict[str, Any]) -> tuple[dict[str, Any], Fifo, Path]:
        """The same turn, but it says when it started and waits for a file to go on."""
        self._fifos += 1
        fifo = Fifo(self.root / f"started-{self._fifos}")
        gate = self.root / f"gate-{self._fifos}"
        return {**turn, "touch_file": str(fifo.path), "wait_for_file": str(gate)}, fifo, gate

    async def execute(self, job: Job) -> None:
        # The worker's own job runner (claimed above as its dispatcher claims): the test
        # runs one job at a time so each run's outcome is its choice.
        await asyncio.wait_for(self.live.worker._execute(job), 30)

    async def notice_cancelled(self, job: Job, run: asyncio.Task[None]) -> None:
        """What the worker's dispatcher does on its next wake: a job that is no longer
        running (cancelled by the owner) has its run stopped."""
        found = await job_store.get(self.live.store.reader, job.id)
        assert found is not None
        if found.state != "running":
            run.cancel()

    async def started(self, fifo: Fifo, run: asyncio.Task[None]) -> bool:
        """Wait until the fake CLI of `run` started; False when the run ended before it."""
        line = asyncio.ensure_future(fifo.line(timeout=20))
        done, _ = await asyncio.wait({line, run}, return_when=asyncio.FIRST_COMPLETED)
        if line not in done:
            line.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await line
            return False
        line.result()
        return True


@contextlib.contextmanager
def fake_cli_env(world: World):
    saved = {name: os.environ.get(name) for name in FAKE_ENV}
    os.environ.update(world.environ())
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
