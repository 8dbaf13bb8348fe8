"""Wiring: configuration -> store, board, worker (and, when configured, the chat side).

Start-up order matters: take the instance lock, recover what a previous process
left running, import intent files, then start serving. The same pieces make the
three kinds of process: the bot with its worker (`chatbot run`), the bot alone
(`run --no-worker`: chat, board, outbox) and a worker alone (`chatbot worker`,
any number of them, on any host that reaches the database and the repository).
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
from typing import TYPE_CHECKING, Any

from chatbot.board import BoardService, FileLimits
from chatbot.config import Config
from chatbot.store import Store, StoreError, StoreUnwritable, upkeep
from chatbot.store import workers as worker_store
from runners import remote

if TYPE_CHECKING:
    # The worker (and the MCP server its runs use) loads only where one is made: a
    # `chatbot status` or `chatbot start` starts about twice as fast without it.
    from chatbot.pipeline.worker import Worker

log = logging.getLogger(__name__)


async def open_store(config: Config) -> Store:
    try:
        return await Store.open(
            config.bot.database, password_file=config.bot.database_password_file
        )
    except StoreError as error:
        # A full disk stays StoreUnwritable: `check` and the CLI tell it apart.
        kind = StoreUnwritable if isinstance(error, StoreUnwritable) else StoreError
        raise kind(_with_password_key(config, str(error))) from None


def _with_password_key(config: Config, message: str) -> str:
    """A refused PostgreSQL login names the key that gives the password. Without the key
    the bot connects with none (trust or peer authentication, ~/.pgpass, PGPASSWORD)."""
    if config.bot.sqlite_file is not None or "password" not in message:
        return message
    path = config.bot.database_password_file
    if path is None:
        return (
            f"{message}; the server wants a password: set bot.database_password_file "
            "to a file holding it"
        )
    return f"{message}; check the password in bot.database_password_file ({path})"


def make_board(config: Config, store: Store) -> BoardService:
    return BoardService(
        store,
        config.bot.checkout,
        default_lane=next(iter(config.lanes)),
        deploy_configured=bool(config.deploy and config.deploy.command),
        budgets=config.budgets(),
        files=file_limits(config),
        max_open_questions=config.bot.max_open_questions,
    )


def file_limits(config: Config) -> FileLimits:
    """[files] as the board keeps files by it."""
    section = config.files
    return FileLimits(
        folder=config.files_folder,
        max_bytes=section.max_bytes,
        quota_bytes=section.quota_bytes,
        max_pixels=section.max_pixels,
        keep_loose_s=section.keep_loose_minutes * 60.0,
    )


async def ensure_repo(config: Config) -> None:
    """This process's checkout: a clone of the remote (made once, fetched at each start),
    or the demo repository made from its seed folder on first use (`[bot] seed_repo`)."""
    if config.bot.remote is not None:
        try:
            await remote.ensure_clone(config.bot.remote, config.bot.checkout)
        except remote.WorkspaceError as error:
            raise StoreError(f"repository {config.bot.remote}: {error}") from None
        return
    await asyncio.to_thread(_seed_repo, config)


def _seed_repo(config: Config) -> None:
    repo, seed = config.bot.checkout, config.bot.seed_repo
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
    options.setdefault("lease_s", config.workers.lease_s)
    options.setdefault("heartbeat_s", config.workers.heartbeat_s)
    options.setdefault("host", config.workers.host)
    from chatbot.pipeline.worker import Worker

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
    store = await open_store(config)
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
    # None for the bot alone (`run --no-worker`): workers run elsewhere.
    worker: Worker | None
    instance_id: str

    async def prepare(self, *, import_cards: bool = True) -> None:
        """Recover what a previous process left running, then import the intent files.

        Call it after attaching listeners (notifier, chat), so the room hears about
        runs that a crash cut off. A worker alone imports nothing: the bot does.
        """
        recovered = await self.worker.recover(await self.worker.register()) if self.worker else 0
        # After recovery, which may have queued a job again in the lane it ran in.
        if moved := await self.board.queue.move_to_card_lanes():
            log.info("moved %d queued jobs to the lane their role runs in now", moved)
        async with self.store.transaction() as db:
            pruned = await upkeep.prune(db)
            await worker_store.prune(db)
        if pruned.processed_events or pruned.sent_posts:
            log.info(
                "pruned %d processed event ids and %d sent posts older than %d days",
                pruned.processed_events,
                pruned.sent_posts,
                upkeep.KEEP_DAYS,
            )
        if not import_cards:
            log.info("worker ready on %s: %d runs recovered", self.store.name, recovered)
            return
        report = await self.board.import_cards()
        log.info(
            "board ready: %d imported, %d updated, %d unchanged, %d rejected, %d runs recovered",
            len(report.created),
            len(report.updated),
            report.unchanged,
            len(report.rejected),
            recovered,
        )


@contextlib.asynccontextmanager
async def running_bot(
    config: Config, *, chat: bool = True, worker: bool = True
) -> AsyncIterator[Running]:
    """The board and, as asked, its worker; with `chat`, the database's one bot.

    `chat=False` is a worker alone: any number of them share the database, so it
    takes no instance lock.
    """
    store = await open_store(config)
    try:
        # Moves and notices of other processes (workers, the CLI) wake this one's
        # worker, outbox and web pages: PostgreSQL says so itself, SQLite is watched.
        store.follow_other_processes()
        if chat:
            await store.lock_instance()
        await ensure_repo(config)
        board = make_board(config, store)
        instance_id = uuid.uuid4().hex
        made = make_worker(config, board, instance_id=instance_id) if worker else None
        yield Running(config, store, board, made, instance_id)
    finally:
        await store.close()


def stop_on_signals(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)


# StoreError: what opening the database can raise; the CLI reports it plainly.
__all__ = ["Running", "StoreError", "open_board", "running_bot", "stop_on_signals"]
