"""Wiring: configuration -> store, board, worker (and, when configured, the chat side).

Start-up order matters: take the instance lock, recover what a previous process
left running, import intent files, then start serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import signal
import subprocess
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from chatbot.board import BoardService
from chatbot.config import Config
from chatbot.pipeline.worker import Worker
from chatbot.store import Store, StoreError, upkeep
from chatbot.store.db import InstanceLock
from runners.process import kill_orphan

log = logging.getLogger(__name__)


def make_board(config: Config, store: Store) -> BoardService:
    return BoardService(
        store,
        config.bot.repo,
        default_lane=next(iter(config.lanes)),
        deploy_configured=bool(config.deploy and config.deploy.command),
        budgets=config.budgets(),
    )


def ensure_repo(config: Config) -> None:
    """Create the demo repository from its seed folder on first use (`[bot] seed_repo`)."""
    repo, seed = config.bot.repo, config.bot.seed_repo
    if seed is None or repo.exists():
        return
    shutil.copytree(seed, repo)
    identity = ["-c", "user.name=intent-board", "-c", "user.email=intent-board@localhost"]
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        [*identity, "commit", "-q", "-m", "Seed"],
    ):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    log.info("created %s from %s", repo, seed)


def make_worker(config: Config, board: BoardService, **options: Any) -> Worker:
    """The worker, wired to what it listens to (the other listeners: serve.py).

    It wakes on every commit, since a move may have queued work (here, or by the CLI
    beside a running bot), and hears every move, so a finished card's worktree goes.
    """
    worker = Worker(board, config, **options)
    board.store.on_commit.append(worker.wake)
    board.listeners.append(worker.note_finished)
    return worker


@contextlib.asynccontextmanager
async def open_board(config: Config) -> AsyncIterator[BoardService]:
    """The board for a one-shot command (CLI): no lock, no worker.

    The repository's intent files are imported first, as the bot does at start, so
    a card whose file exists can be seen and moved before the bot ever ran.
    """
    store = await Store.open(config.bot.database)
    try:
        board = make_board(config, store)
        await board.import_cards()
        yield board
    finally:
        await store.close()


@dataclass
class Running:
    config: Config
    store: Store
    board: BoardService
    worker: Worker
    instance_id: str

    async def prepare(self) -> None:
        """Recover what a previous process left running, then import the intent files.

        Call it after attaching listeners (notifier, chat), so the room hears about
        runs that a crash cut off.
        """
        recovered = await self.board.recover(self.instance_id)
        for item in recovered:
            if item.job.process and kill_orphan(item.job.process):
                # A crashed bot's agent would otherwise keep editing the worktree.
                log.warning("stopped the orphaned run of job %s", item.job.id)
        async with self.store.transaction() as db:
            pruned = await upkeep.prune(db)
        if pruned.processed_events or pruned.sent_posts:
            log.info(
                "pruned %d processed event ids and %d sent posts older than %d days",
                pruned.processed_events,
                pruned.sent_posts,
                upkeep.KEEP_DAYS,
            )
        report = await self.board.import_cards()
        log.info(
            "board ready: %d imported, %d updated, %d unchanged, %d rejected, %d runs recovered",
            len(report.created),
            len(report.updated),
            report.unchanged,
            len(report.rejected),
            len(recovered),
        )


@contextlib.asynccontextmanager
async def running_bot(config: Config) -> AsyncIterator[Running]:
    """Lock the database for this process and build the board and its worker."""
    lock = InstanceLock(config.bot.database)
    lock.acquire()
    store = None
    try:
        ensure_repo(config)
        store = await Store.open(config.bot.database)
        board = make_board(config, store)
        instance_id = uuid.uuid4().hex
        worker = make_worker(config, board, instance_id=instance_id)
        yield Running(config, store, board, worker, instance_id)
    finally:
        if store is not None:
            await store.close()
        lock.release()


def stop_on_signals(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)


# StoreError: what opening the database can raise; the CLI reports it plainly.
__all__ = ["Running", "StoreError", "open_board", "running_bot", "stop_on_signals"]
