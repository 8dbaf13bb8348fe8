"""The worker: claims jobs per lane within each lane's concurrency and runs their role.

One dispatcher loop (claim, start, wait for a wake-up) in the spirit of arq.
It wakes when the board queues work or a run ends (on PostgreSQL also when another
host committed), and otherwise every few seconds to notice jobs queued by another
process. Beside it, a keep-alive loop renews the worker's registration and recovers
the jobs of workers that stopped renewing theirs (on any host), so any number of
workers on one database share the queue and each lane's concurrency.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from pathlib import Path
from typing import Any

from chatbot.board import (
    Change,
    Job,
    LeaseLost,
    StoreError,
    StoreUnwritable,
    UnknownCard,
)
from chatbot.board.files import FileExistsRefusal
from chatbot.board.ports import WorkerSide
from chatbot.board.run_events import RunObserver
from chatbot.board.talk import can_talk
from chatbot.config import Config
from chatbot.domain.phases import WORKTREE_DONE_PHASES
from chatbot.domain.roles import DEPLOY_JOB, ROLES, ProfileFrom, role_lane
from chatbot.domain.transitions import Action, TransitionRefused
from chatbot.log_context import name_task
from chatbot.pipeline import attached
from chatbot.pipeline.asking import OwnerAnswers
from chatbot.pipeline.budget import hold_for_day_budget, stopped_by_budget
from chatbot.pipeline.context import (
    JobContext,
    RunFailed,
    RunInterrupted,
    RunLimited,
)
from chatbot.pipeline.jobs import handler_of, resolve_all
from chatbot.pipeline.quota import next_wake, wait_for_reset
from chatbot.pipeline.talking import LiveTalks
from runners.contracts import ContractError
from runners.process import kill_orphan, process_identity
from runners.runtimes import RunnerError
from runners.workspace import WorkspaceError, remove_worktree, sync_checkout

log = logging.getLogger(__name__)


async def current_branch(repo: Path) -> str | None:
    process = await asyncio.create_subprocess_exec(
        "git",
        "-C",
        str(repo),
        "symbolic-ref",
        "--quiet",
        "--short",
        "HEAD",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    out, _ = await process.communicate()
    return out.decode().strip() or None if process.returncode == 0 else None


class Worker:
    def __init__(
        self,
        board: WorkerSide,
        config: Config,
        *,
        instance_id: str,
        lease_s: float = 60.0,
        heartbeat_s: float = 15.0,
        poll_s: float = 5.0,
        role_concurrency: int = 2,
        observers: list[RunObserver] | None = None,
        host: str | None = None,
    ):
        # Every job kind's coroutine is found now: a table naming none stops the start.
        resolve_all()
        self.board = board
        self.host = host or socket.gethostname()
        self.config = config
        self.instance_id = instance_id
        self.lease_s = lease_s
        self.heartbeat_s = heartbeat_s
        self.poll_s = poll_s
        self.allowed = config.allowed_profiles()
        self.observers: list[RunObserver] = list(observers or [])
        self.lanes: dict[str, int] = {name: lane.concurrency for name, lane in config.lanes.items()}
        for role in ROLES:
            if role.profile_from is ProfileFrom.ROLE:
                self.lanes[role_lane(role.name)] = role_concurrency
        self.lanes[DEPLOY_JOB] = 1
        self.target_branch: str | None = None
        # Jobs this worker ran that failed (`run --until-idle` exits non-zero then).
        self.failed_jobs = 0
        # Lanes whose queued runs wait for the day's budget (until tomorrow or /allow).
        self.held: set[str] = set()
        self._wake = asyncio.Event()
        self._running: dict[int, asyncio.Task[None]] = {}
        self._lane_of: dict[int, str] = {}
        self._job_of: dict[int, Job] = {}
        # Jobs past their handler (result applied, or stopped): their last step, closing
        # their conversation, must run to its end whatever wakes the worker meanwhile.
        self._ending: set[int] = set()
        # Cards that reached an end (deployed, archived): their worktrees go.
        self._finished_cards: set[str] = set()
        # The conversations with the agents running here (steers, approvals).
        self.talks = LiveTalks(board, config)
        # What its running agents asked the owner through their tools (pipeline/asking.py).
        self.answers = OwnerAnswers(board)
        # Any commit may have queued work (here or by the CLI beside a running bot).

    async def register(self) -> tuple[str, ...]:
        """Announce this worker (alive, its lanes); returns the workers of this host whose
        process is gone, whose jobs are orphans now."""
        return await self.board.queue.worker_alive(
            self.instance_id,
            host=self.host,
            process=process_identity(os.getpid()),
            lanes=sorted(self.lanes),
            lease_s=self.lease_s,
        )

    async def recover(self, dead: tuple[str, ...] = ()) -> int:
        """Queue again or fail the jobs nobody looks after; stop what a dead worker of
        this host left running (its agent would otherwise keep editing the worktree)."""
        recovered = await self.board.failures.recover(dead)
        for item in recovered:
            job = item.job
            if job.process and job.host in (None, self.host) and kill_orphan(job.process):
                log.warning("stopped the orphaned run of job %s", job.id)
        return len(recovered)

    async def _keep_alive(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s)
            try:
                await self._renew_leases()
                if await self.recover(await self.register()):
                    self._wake.set()
            except StoreError as error:
                # An outage fails every round: one line each, the traceback only with -v.
                log.warning("worker keep-alive failed (%s); trying again", error)
                log.debug("worker keep-alive failed", exc_info=True)
            except Exception:  # noqa: BLE001 - a bug here must not stop the worker
                log.exception("worker keep-alive failed; trying again")

    def wake(self) -> None:
        """Look for work now (wired to every commit: a move may have queued some)."""
        self._wake.set()

    async def run(self, *, until_idle: bool = False, stop: asyncio.Event | None = None) -> None:
        deploy = self.config.deploy
        self.target_branch = (deploy.branch if deploy and deploy.branch else None) or (
            await current_branch(self.config.bot.checkout)
        )
        if self.target_branch is None:
            log.warning(
                "%s is not a git repository on a branch: builds and deploys will fail",
                self.config.bot.checkout,
            )
        if not await self._join(stop, until_idle=until_idle):
            return
        stopper = asyncio.ensure_future(stop.wait()) if stop else None
        keep_alive = asyncio.create_task(self._keep_alive(), name="worker-keep-alive")
        try:
            while stop is None or not stop.is_set():
                self._wake.clear()
                timeout = self.poll_s
                try:
                    # First: an owner's steer or answer waits for this wake-up.
                    await self.talks.deliver()
                    await self.answers.deliver()
                    await self._tidy_worktrees()
                    await self._notice_cancelled()
                    await self._claim_all()
                    if until_idle and not self._running and not await self._queued():
                        return
                    # A job waiting for a provider's reset is due: wake then, not later.
                    timeout = await next_wake(self.board, list(self.lanes), self.poll_s)
                except StoreUnwritable as error:
                    # A full disk: the runs go on; claiming waits until writes work.
                    log.warning("worker: no new jobs while %s", error)
                    await self._until_writable(stop)
                except StoreError as error:
                    # The database is away (a restart, the network between hosts): the
                    # runs go on, and the next round (at the latest after poll_s) retries.
                    log.warning("worker: the database is not reachable (%s); retrying", error)
                waiters = {asyncio.ensure_future(self._wake.wait())}
                if stopper:
                    waiters.add(stopper)
                done, pending = await asyncio.wait(
                    waiters | set(self._running.values()),
                    timeout=timeout,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                for waiter in waiters - {stopper}:
                    waiter.cancel()
        finally:
            keep_alive.cancel()
            if stopper:
                stopper.cancel()
            await self._stop_running()
            with contextlib.suppress(Exception):
                await self.board.queue.worker_stopped(self.instance_id)

    async def _join(self, stop: asyncio.Event | None, *, until_idle: bool) -> bool:
        """Register and take over the orphans, once the database lets it: a full disk or a
        database that is away at the worker's start (the chat answers meanwhile) is waited
        out, not a crash of the bot. False when stopped first."""
        while stop is None or not stop.is_set():
            try:
                await self.recover(await self.register())
                return True
            except StoreUnwritable as error:
                log.warning("worker: waiting to start while %s", error)
                await self._until_writable(stop)
            except StoreError as error:
                if until_idle:  # a command: it says so and ends
                    raise
                log.warning("worker: the database is not reachable (%s); retrying", error)
                if stop is None:
                    await asyncio.sleep(self.poll_s)
                else:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), self.poll_s)
        return False

    async def _until_writable(self, stop: asyncio.Event | None) -> None:
        waits: set[asyncio.Future[Any]] = {
            asyncio.ensure_future(self.board.reads.store_health.wait_writable())
        }
        if stop is not None:
            waits.add(asyncio.ensure_future(stop.wait()))
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for waiter in waits:
            waiter.cancel()

    async def note_finished(self, _db: object, change: Change) -> None:
        """A board listener: a card that reached an end gives up its worktree."""
        if change.card.phase in WORKTREE_DONE_PHASES:
            self._finished_cards.add(change.card.slug)

    async def _tidy_worktrees(self) -> None:
        """Remove the worktrees of cards that are done with them; the branches stay."""
        while self._finished_cards:
            slug = self._finished_cards.pop()
            try:
                card = await self.board.reads.card(slug)
            except UnknownCard:
                continue
            if card.phase not in WORKTREE_DONE_PHASES:
                continue  # the change that finished it was rolled back
            try:
                await remove_worktree(self.config.bot.checkout, self.config.bot.workspaces, slug)
            except (WorkspaceError, OSError) as error:
                log.warning("could not remove the worktree of %s: %s", slug, error)

    async def _queued(self) -> bool:
        return bool(await self.board.queue.queued_lanes(self.lanes) - self.held)

    async def _claim_all(self) -> None:
        # One read first: most wake-ups (a chat reply, an outbox mark) queued nothing,
        # a lane may be full on other hosts, and a claim is a write transaction.
        waiting = await self.board.queue.claimable_lanes(self.lanes)
        self.held = await hold_for_day_budget(self.board, self.observers, waiting)
        waiting -= self.held
        for lane, limit in self.lanes.items():
            if lane not in waiting:
                continue
            while sum(1 for job_lane in self._lane_of.values() if job_lane == lane) < limit:
                job = await self.board.queue.claim(
                    lane, self.instance_id, self.lease_s, limit=limit, host=self.host
                )
                if job is None:
                    break
                task = asyncio.create_task(self._execute(job), name=f"job-{job.id}-{job.kind}")
                self._running[job.id] = task
                self._lane_of[job.id] = lane
                self._job_of[job.id] = job

                # The default binds this job's id now, not the loop variable's last one.
                def finished(_task: object, job_id: int = job.id) -> None:
                    self._finished(job_id)

                task.add_done_callback(finished)

    def _finished(self, job_id: int) -> None:
        self._running.pop(job_id, None)
        self._lane_of.pop(job_id, None)
        self._job_of.pop(job_id, None)
        self._ending.discard(job_id)
        self._wake.set()

    async def _notice_cancelled(self) -> None:
        """A job cancelled by /cancel (here or from another process) stops its run at once."""
        if not self._running:
            return
        for job_id in await self.board.queue.stopped(self._running):
            task = self._running.get(job_id)
            if task is not None and job_id not in self._ending:
                log.info("job %s was cancelled; stopping its run", job_id)
                task.cancel()

    async def _stop_running(self) -> None:
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _heartbeat(self, job: Job, runner: asyncio.Task[None]) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s)
            try:
                await self.board.queue.heartbeat(job, self.instance_id, self.lease_s)
            except LeaseLost:
                log.info("job %s is no longer ours; stopping its run", job.id)
                runner.cancel()
                return
            except StoreError as error:
                # The run goes on; if the outage outlasts the lease, another worker
                # recovers the job and this one learns so at the next heartbeat.
                log.warning("job %s: lease not renewed (%s); trying again", job.id, error)

    async def _renew_leases(self) -> None:
        """Renew the leases of the jobs running here, before recovering anyone's: after
        the database took no writes for a while, they look expired, yet they run."""
        for job_id in list(self._running):
            job = self._job_of.get(job_id)
            if job is None:
                continue
            with contextlib.suppress(LeaseLost):
                await self.board.queue.heartbeat(job, self.instance_id, self.lease_s)

    async def _execute(self, job: Job) -> None:
        runner = asyncio.current_task()
        assert runner is not None
        # This task is the job's own: every line written while it runs names the job.
        name_task(job=job.id, role=job.kind)
        heartbeat = asyncio.create_task(self._heartbeat(job, runner))
        try:
            await self._handle(job)
        finally:
            heartbeat.cancel()
            self._ending.add(job.id)
            # A read-only run's copies of the card's files go with its job.
            attached.remove_job_folder(self.config.bot.workspaces, job.id)
            if can_talk(job.kind):
                await self.talks.job_ended(job, self.observers)

    async def _handle(self, job: Job) -> None:
        handler = handler_of(job.kind)
        card = await self.board.reads.card_by_id(job.card_id) if job.card_id is not None else None
        name_task(card=card.slug if card else None)
        if handler is None or card is None:
            await self._fail(job, f"no handler for job kind {job.kind!r} or card gone")
            return
        ctx = JobContext(
            job=job,
            card=card,
            board=self.board,
            config=self.config,
            worker_id=self.instance_id,
            target_branch=self.target_branch,
            allowed=self.allowed,
            observers=self.observers,
            talks=self.talks,
            answers=self.answers,
        )
        role = job.kind
        try:
            if role != DEPLOY_JOB and await stopped_by_budget(
                self.board, job, card, self.instance_id
            ):
                self.failed_jobs += 1
                return
            if self.config.bot.remote is not None and self.target_branch is not None:
                # Another host may have pushed intents or merges since the last job.
                await sync_checkout(self.config.bot.checkout, self.target_branch)
            await handler(ctx)
        except RunInterrupted as stopped:
            await self._interrupted(ctx, stopped)
        except RunLimited as limited:
            await wait_for_reset(ctx, job, self.instance_id, limited)
        except RunFailed as failed:
            await self._fail(job, failed.detail, ctx)
        except ContractError as error:
            await self._fail(job, f"the {role}'s answer was rejected: {error}", ctx)
        except WorkspaceError as error:
            await self._fail(job, f"the repository could not be brought up to date: {error}", ctx)
        except RunnerError as error:
            await self._fail(job, f"{role} run could not start: {error}", ctx)
        except FileExistsRefusal as refusal:
            await self._fail(job, str(refusal), ctx)
        except TransitionRefused as refused:
            await self._fail(job, f"result not applied: {refused}", ctx)
        except LeaseLost:
            log.info("job %s was taken away while it ran; its result is dropped", job.id)
        except StoreError as error:
            # A write of this job that is not its result (those wait: JobContext.saved)
            # met a full disk or the database away: fail it, once writes work again.
            log.warning("job %s (%s) stopped: %s", job.id, role, error)
            await self._fail(job, f"the database took no writes during this run: {error}", ctx)
        except Exception as error:  # noqa: BLE001 - a bug must fail one job, not the worker
            log.exception("job %s (%s) crashed", job.id, role)
            await self._fail(job, f"internal error: {type(error).__name__}: {error}", ctx)

    async def _interrupted(self, ctx: JobContext, stopped: RunInterrupted) -> None:
        """The owner's /interrupt: the card waits with the session, for /steer or /fix."""
        profile = ctx.profile()
        with contextlib.suppress(LeaseLost):
            await ctx.apply(
                Action.RUN_INTERRUPTED,
                answer_used=False,
                reason=f"{ctx.role.name} interrupted by the owner",
                data=ctx.card.data.updated(
                    interrupted={
                        "session": stopped.session_id,
                        "runtime": profile.runtime,
                        "role": ctx.role.name,
                    }
                ),
            )

    async def _fail(self, job: Job, detail: str, ctx: JobContext | None = None) -> None:
        log.warning("job %s (%s) failed: %s", job.id, job.kind, detail)
        self.failed_jobs += 1
        # A run that ended well but whose answer the job did not apply: it did not count.
        rejected = ctx.answered_run() if ctx is not None else None

        async def record() -> None:
            with contextlib.suppress(LeaseLost):
                await self.board.failures.fail(
                    job, self.instance_id, detail=detail, rejected_run=rejected
                )

        await self.board.queue.saved(record, f"job {job.id} ({job.kind}): its failure")
