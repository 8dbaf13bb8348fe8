"""What a role handler gets for one job: the card, the board, and a way to run a model.

Every model run goes through `JobContext.run`, which builds the request from
configuration, enforces the limits, and records one telemetry row, whatever the
outcome. A run that fails raises `RunFailed` with the detail the card will show; the
stage comes from the phase the card is in (the domain's RUN_FAILURE table).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from chatbot.board import Card, Job, RunRecord, StoreUnwritable, run_events
from chatbot.board.change import Applied
from chatbot.board.files import StagedFiles
from chatbot.board.ports import WorkerSide
from chatbot.board.run_events import (
    ProviderLimited,
    RunEvent,
    RunFinished,
    RunObserver,
    RunProgress,
    RunStarted,
)
from chatbot.config import Config
from chatbot.domain import roles
from chatbot.domain.transitions import Action
from chatbot.pipeline import attached, redaction
from chatbot.pipeline.asking import OwnerAnswers
from chatbot.pipeline.launch import Launch, prepare
from chatbot.pipeline.run_records import Profile, run_record
from chatbot.pipeline.run_tools import serving_for
from runners.process import process_identity
from runners.profiles import AllowedProfiles
from runners.runtimes import Limited, RunResult, Usage, run_model

if TYPE_CHECKING:
    from chatbot.pipeline.talking import LiveTalks

log = logging.getLogger(__name__)

T = TypeVar("T")


class RunFailed(Exception):
    """A run that produced nothing usable; `detail` goes onto the card."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class RunLimited(Exception):
    """The provider's quota or rate limit ended the run: the work is not at fault, the
    job waits for the reset (`Limited.reset_at`, else `[bot] quota_retry_s`)."""

    def __init__(self, runtime: str, limited: Limited):
        super().__init__(limited.reason)
        self.runtime = runtime
        self.limited = limited


class RunInterrupted(Exception):
    """The owner interrupted the run (/interrupt); its session can go on."""

    def __init__(self, session_id: str | None):
        super().__init__("interrupted by the owner")
        self.session_id = session_id


@dataclass
class JobContext:
    job: Job
    card: Card
    board: WorkerSide
    config: Config
    worker_id: str
    target_branch: str | None
    allowed: AllowedProfiles
    # Told what becomes of its runs (chatbot/board/run_events.py; the notifier posts it).
    observers: list[RunObserver] = field(default_factory=list)
    runs: list[RunRecord] = field(default_factory=list)
    #: The worker's conversations with its running agents; None: runs are one-shot.
    talks: LiveTalks | None = None
    #: The answers to what its runs ask the owner (their tools); None: runs get no tools.
    answers: OwnerAnswers | None = None
    _last_run_id: int | None = None
    _talking: bool = False
    #: The lane profile this job's runs moved to when their own provider was limited.
    _fallback: Profile | None = None
    #: The card's attached files laid out for this job's runs (pipeline/attached.py).
    laid: attached.Laid = field(default_factory=attached.Laid)
    #: Where the current (or last) run works: a steer's files are laid out beside it.
    run_cwd: Path | None = None

    @property
    def repo(self) -> Path:
        return self.config.bot.checkout

    @property
    def payload(self) -> dict[str, Any]:
        return self.job.payload

    @property
    def role(self) -> roles.Role:
        """The record of the role this job runs (its kind, in the job table)."""
        return roles.BY_NAME[self.job.kind]

    def profile(self) -> Profile:
        """What this job's role runs with on this card, as its record says where from."""
        role = self.role
        if role.profile_from is roles.ProfileFrom.LANE:
            return self.lane_profile(self.card)
        section = self.config.role(role.name)
        return Profile(
            section.runtime,
            section.model,
            section.reasoning_effort,
            section.timeout_s,
            section.idle_timeout_s,
            section.reasoning_effort,
        )

    def lane_profile(self, card: Card) -> Profile:
        """The card's own profile as the operator chose it (escalation may change the model)."""
        lane_name = card.lane or self.board.default_lane
        lane = self.config.lanes.get(lane_name)
        if lane is None:
            raise RunFailed(f"lane {lane_name!r} is not configured any more")
        return Profile(
            card.runtime or lane.runtime,
            card.model if card.model is not None else lane.model,
            card.reasoning_effort if card.reasoning_effort is not None else lane.reasoning_effort,
            lane.timeout_s,
            lane.idle_timeout_s,
            lane.reasoning_effort,
            lane.network,
        )

    def intent(self, card: Card | None = None) -> tuple[str, str]:
        """(repository path, text) of the card's intent file; the text is untrusted data."""
        card = card or self.card
        path = card.source_path or f"docs/intent/{card.slug}.md"
        root = self.repo.resolve()
        if not (root / path).resolve().is_relative_to(root) or (self.repo / path).is_symlink():
            # A link an agent committed could name a secret of the host: never sent on.
            raise RunFailed(f"intent file {path} is a link; an intent must be a file")
        try:
            return path, (self.repo / path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RunFailed(f"intent file {path} is missing") from None
        except (OSError, UnicodeDecodeError) as error:
            raise RunFailed(f"intent file {path} cannot be read: {error}") from None

    def staged(self) -> StagedFiles:
        return StagedFiles(self.repo)

    async def apply(
        self, action: Action, *, answer_used: bool = True, **applied: Unpack[Applied]
    ) -> Card:
        """Apply a result; the last run's answer counts as accepted (with its review
        decision) unless `answer_used` is False (a builder that ran out of turns)."""
        accepted = None
        if answer_used and self._last_run_id is not None and self.runs[-1].outcome == "ok":
            review = applied.get("review_decision") if self.runs[-1].role == "reviewer" else None
            accepted = (self._last_run_id, review)
        return await self.saved(
            lambda: self.board.apply(
                self.card.slug,
                action,
                job=self.job,
                worker=self.worker_id,
                accepted_run=accepted,
                **applied,
            )
        )

    async def saved(self, write: Callable[[], Awaitable[T]]) -> T:
        """`write()` once the database takes writes again (a full disk): the run's result
        waits instead of being lost. Meanwhile the job's lease may run out; then the
        write says LeaseLost, as for any job taken away."""
        what = f"job {self.job.id} ({self.job.kind}): its result"
        return await self.board.queue.saved(write, what)

    async def run(
        self,
        prompt: str,
        *,
        cwd: Path,
        profile: Profile | None = None,
        resume_session_id: str = "",
        max_turns: int | None = None,
        previous_usage: Usage | None = None,
        accept_turn_limit: bool = False,
    ) -> RunResult:
        """One model run of this job's role; its profile (unless given), its sandbox and
        its grants follow the role's record.

        The steps: the card's files are laid out and the launch prepared (launch.py);
        the run goes on while its progress is told (`_execute`); its record is kept
        (`_recorded`); its outcome decides: an interrupt, a limited provider (whose
        fallback lane runs the prompt again), a failure, or the result."""
        profile = self._profile_for(profile)
        runtime_config = self.config.runtimes.get(profile.runtime)
        if runtime_config is None:
            raise RunFailed(f"runtime {profile.runtime!r} has no [runtimes.{profile.runtime}]")
        self.run_cwd = cwd
        prompt += await self._lay_out_files(cwd)
        launch = prepare(
            self.config,
            self.role,
            profile,
            runtime_config,
            cwd=cwd,
            prompt=prompt,
            images=self.laid.images(),
            shown=() if self.role.writes or self.laid.folder is None else (self.laid.folder,),
            resume_session_id=resume_session_id,
            max_turns=max_turns,
        )
        role = self.role.name
        await self.tell(RunStarted(self.card, role, profile.runtime, profile.model, self.job.id))
        started = time.time()
        result, steers = await self._execute(launch, started, previous_usage)
        await self._recorded(launch, result, started, steers)
        output = result.output
        if output.interrupted and result.ok:
            raise RunInterrupted(output.session_id or resume_session_id or None)
        if not result.ok and output.limited is not None:
            fallback = self._fallback_for(profile)
            if fallback is None:
                raise RunLimited(profile.runtime, output.limited)
            self._fallback = fallback
            await self.tell(ProviderLimited(self.card, profile.runtime, output.limited, True))
            return await self.run(
                prompt, cwd=cwd, profile=fallback, accept_turn_limit=accept_turn_limit
            )
        if not result.ok and not (accept_turn_limit and output.turn_limit_reached):
            raise RunFailed(result.failure or "the run failed")
        return result

    def _profile_for(self, given: Profile | None) -> Profile:
        """The profile given, else the role's; the fallback's once the job fell back."""
        profile = given or self.profile()
        if self._fallback is not None and profile.runtime != self._fallback.runtime:
            # The session the caller resumes is the fallback's own (from its last run).
            profile = self._fallback
        return profile

    async def _lay_out_files(self, cwd: Path) -> str:
        """The card's attached files laid out for the run in `cwd`; the prompt's part
        that names them."""
        files = await self.board.files.of_card(self.card.slug)
        await attached.lay_out(
            self.board,
            files,
            self.laid,
            cwd=cwd,
            writes=self.role.writes,
            workspaces=self.config.bot.workspaces,
            job_id=self.job.id,
        )
        return attached.prompt_section(files, self.laid)

    async def _execute(
        self, launch: Launch, started: float, previous_usage: Usage | None
    ) -> tuple[RunResult, int]:
        """The run, talked to when its role and runtime can talk, its progress told
        meanwhile; its result with every secret value replaced, and how many steers
        it took."""
        record = self.role
        latest: list[str] = []
        conversation = None
        if record.talks and launch.runtime.talking is not None and self.talks is not None:
            if not self._talking:
                await self.saved(lambda: self.board.talk.begins(self.job))
                self._talking = True
            conversation = self.talks.open(self)
        steers = 0
        redactor = redaction.of(self.config)
        ticker = asyncio.create_task(self._progress(record.name, started, latest))
        try:
            async with serving_for(self, self.board, self.answers, record) as (tools, hold):
                result = await run_model(
                    launch.profile.runtime,
                    replace(launch.request, tools=tools),
                    limits=launch.limits,
                    base_env=launch.base_env,
                    previous_usage=previous_usage,
                    on_spawn=self._remember_process,
                    on_step=lambda step: latest.append(redactor.redact(step)),
                    conversation=conversation,
                    sandbox=launch.sandbox,
                    hold=hold,
                )
        finally:
            ticker.cancel()
            if conversation is not None and self.talks is not None:
                steers = self.talks.close(self.job.id)
        # Nothing the agent wrote carries a secret value on into posts, the store or git.
        result = redactor.result(result)
        if result.failure and "binary not found" in result.failure:
            detail = f"{result.failure} (set runtimes.{launch.profile.runtime}.binary)"
            result = _with_failure(result, detail)
        return result, steers

    async def _recorded(
        self, launch: Launch, result: RunResult, started: float, steers: int
    ) -> RunRecord:
        """The run's telemetry row, written (it waits for a full disk) and told."""
        run = run_record(
            role=self.role.name,
            profile=launch.profile,
            takes_effort=launch.runtime.takes_effort,
            runtime_config=launch.runtime_config,
            result=result,
            job=self.job,
            card=self.card,
            prompt=launch.request.prompt if self.config.bot.keep_transcripts else None,
            started=started,
        )
        if steers:
            run = replace(run, steers=steers)
        self._last_run_id = await self.saved(lambda: self.board.queue.record_run(run))
        self.runs.append(run)
        await self.tell(RunFinished(self.card, run))
        return run

    def _fallback_for(self, profile: Profile) -> Profile | None:
        """The profile of the card lane's `fallback` lane, for a role that runs with the
        lane's profile and has not fallen back yet."""
        if self._fallback is not None or self.role.profile_from is not roles.ProfileFrom.LANE:
            return None
        lane = self.config.lanes.get(self.card.lane or self.board.default_lane)
        other = self.config.lanes.get(lane.fallback) if lane and lane.fallback else None
        if other is None or other.runtime == profile.runtime:
            return None
        return Profile(
            other.runtime,
            other.model,
            other.reasoning_effort,
            other.timeout_s,
            other.idle_timeout_s,
            other.reasoning_effort,
            other.network,
        )

    async def _progress(self, role: str, started: float, steps: list[str]) -> None:
        """Every `progress_interval_s` while the run goes on: how long, the latest step."""
        interval = self.config.bot.progress_interval_s
        while True:
            await asyncio.sleep(interval)
            elapsed = time.time() - started
            step = steps[-1] if steps else None
            del steps[:-1]  # only the latest is ever shown
            await self.tell(RunProgress(self.card, self.job.id, role, elapsed, step))

    def answered_run(self) -> int | None:
        """The last run, if it ended well: a job that fails after it refused its answer,
        and its telemetry must not say the answer counted."""
        if self._last_run_id is None or self.runs[-1].outcome != "ok":
            return None
        return self._last_run_id

    async def _remember_process(self, pgid: int) -> None:
        """Record the agent's process group, so a restart after a crash can stop it."""
        try:
            await self.board.queue.record_process(self.job, process_identity(pgid))
        except StoreUnwritable as error:
            # Only for stopping an orphan after a crash: the run need not wait for it.
            log.warning(
                "job %s: its agent's process group was not recorded: %s", self.job.id, error
            )

    async def tell(self, event: RunEvent) -> None:
        """Tell every observer (a failing one is logged; the run goes on)."""
        await run_events.tell(self.observers, event)


def _with_failure(result: RunResult, failure: str) -> RunResult:
    return replace(result, failure=failure)
