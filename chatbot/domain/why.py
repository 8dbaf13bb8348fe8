"""Why a card is not moving: the first thing that holds it, decided from a snapshot.

`hold` is pure (no store, no clock): the board gathers a `Snapshot` of the card, its
job, its lane's queue, the workers and the budgets (board/inbox.py), and `/why`,
`chatbot why` and the card's web page say the `Hold` it returns in their own words.
The order of the checks is the answer to "first": what a person must do comes before
what the machines wait on, and a card that is moving is held by nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from chatbot.domain import ways
from chatbot.domain.phases import END_PHASES, QUESTION_PHASES, Kind, Phase
from chatbot.domain.roles import DEPLOY_JOB
from chatbot.domain.transitions import Action, find


class HoldKind(StrEnum):
    DONE = "done"
    BUDGET_CARD = "budget_card"
    INTERRUPTED = "interrupted"
    APPROVAL = "approval"
    SPLIT_PLAN = "split_plan"
    QUESTION = "question"
    FAILED = "failed"
    CHILDREN = "children"
    BLOCKED = "blocked"
    LEASE_LOST = "lease_lost"
    RUNNING = "running"
    DAY_BUDGET = "day_budget"
    QUOTA = "quota"
    NO_WORKER = "no_worker"
    LANE = "lane"
    QUEUED = "queued"
    DEPLOY = "deploy"
    START = "start"
    IDLE = "idle"


@dataclass(frozen=True)
class JobSnap:
    id: int
    kind: str
    lane: str
    state: str  # queued | running
    created_at: float
    lease_owner: str | None = None
    lease_expires_at: float | None = None
    host: str | None = None
    started_at: float | None = None
    #: Not claimed before this time: its run met the provider's quota or rate limit.
    not_before: float | None = None
    #: Why it last stopped (the provider's words for a quota wait).
    error: str | None = None
    #: Orphaned, it is queued again; else its card fails (a builder's result is unknown).
    requeued_when_lost: bool = True


@dataclass(frozen=True)
class WorkerSnap:
    id: str
    host: str
    lanes: tuple[str, ...]
    heartbeat_at: float
    expires_at: float


@dataclass(frozen=True)
class Snapshot:
    slug: str
    phase: Phase
    now: float
    failure_stage: str | None = None
    budget_stopped: bool = False
    deploy_pending: bool = False
    #: (slug, phase) of each card it is blocked by that is not done yet.
    blockers: tuple[tuple[str, Phase], ...] = ()
    #: (slug, phase) of each child of a split parent that is not done yet.
    children: tuple[tuple[str, Phase], ...] = ()
    #: When its open question, or its agent's open approval request, was asked.
    question_at: float | None = None
    approval_at: float | None = None
    job: JobSnap | None = None
    #: The slugs (or job kinds) of the lane's jobs before this one: running, then queued.
    ahead: tuple[str, ...] = ()
    workers: tuple[WorkerSnap, ...] = ()
    day_budget_spent: bool = False
    #: The slugs an operator's split plan would create, while it waits for approval.
    split_plan: tuple[str, ...] = ()
    #: What is allowed depends on it too: a research card starts with /research.
    kind: Kind = Kind.INTENT


@dataclass(frozen=True)
class Hold:
    kind: HoldKind
    #: The values its sentence names (slugs, times, hosts), as plain data.
    facts: dict[str, Any] = field(default_factory=dict)
    #: The commands that move it on, likeliest first, "/" written and "{slug}" to fill
    #: (none: it moves by itself).
    ways: tuple[str, ...] = ()


A = Action
# What a command takes after the slug, as its usage line says (chat/commands.py).
_MORE = {A.ANSWER: " <text>", A.STEER: " <text>"}


def commands_for(actions: tuple[Action, ...]) -> tuple[str, ...]:
    return tuple(f"/{a.value} {{slug}}{_MORE.get(a, '')}" for a in actions)


def hold(s: Snapshot) -> Hold:
    """The first thing that holds the card in `s`."""
    if s.phase in END_PHASES:
        return Hold(HoldKind.DONE, {"phase": s.phase.value})
    if s.budget_stopped:
        return Hold(HoldKind.BUDGET_CARD, ways=commands_for(ways.BUDGET_WAYS))
    if s.phase is Phase.INTERRUPTED:
        return Hold(HoldKind.INTERRUPTED, ways=commands_for(ways.FAILED_WAYS[Phase.INTERRUPTED]))
    if s.approval_at is not None:
        return Hold(
            HoldKind.APPROVAL,
            {"since": s.approval_at},
            ("/approve {slug}", "/deny {slug} <reason>"),
        )
    if s.phase is Phase.SPLIT_PLAN_WAITING:
        facts = {"since": s.question_at, "count": len(s.split_plan), "cards": list(s.split_plan)}
        return Hold(HoldKind.SPLIT_PLAN, facts, ("/confirm {slug}", "/answer {slug} <reason>"))
    if s.question_at is not None or s.phase in QUESTION_PHASES:
        return Hold(HoldKind.QUESTION, {"since": s.question_at}, commands_for((A.ANSWER,)))
    failed = ways.ways_forward(s.phase, s.failure_stage)
    if failed:
        return Hold(
            HoldKind.FAILED, {"stage": s.failure_stage or s.phase.value}, commands_for(failed)
        )
    if s.phase is Phase.SPLIT and s.children:
        return Hold(HoldKind.CHILDREN, {"cards": list(s.children)})
    if s.blockers and s.job is None:
        return Hold(HoldKind.BLOCKED, {"cards": list(s.blockers)})
    if s.job is not None:
        return _job_hold(s, s.job)
    if s.phase is Phase.READY_FOR_DEPLOYMENT and s.deploy_pending:
        return Hold(HoldKind.DEPLOY, ways=commands_for((A.DEPLOY,)))
    if s.phase is Phase.PLANNED or s.phase is Phase.PLANNING_WITH_FEEDBACK:
        start = A.RESEARCH if s.kind is Kind.RESEARCH else A.START
        return Hold(HoldKind.START, {"phase": s.phase.value}, commands_for((start,)))
    return Hold(HoldKind.IDLE, {"phase": s.phase.value})


def _job_hold(s: Snapshot, job: JobSnap) -> Hold:
    facts: dict[str, Any] = {"job": job.id, "role": job.kind, "lane": job.lane}
    by_id = {w.id: w for w in s.workers}
    if job.state == "running":
        owner = by_id.get(job.lease_owner or "")
        lease_end = job.lease_expires_at or 0.0
        if owner is None or owner.expires_at < s.now or lease_end < s.now:
            # The lease ends with the worker's registration or its own, whichever first;
            # a live worker's next round takes the job over from then on.
            ends = min(lease_end, owner.expires_at) if owner else lease_end
            # Any live worker's round fails an orphan; only one of its lane runs it again.
            again = job.requeued_when_lost
            live = _serving(s, job.lane) if again else _live(s)
            facts |= {
                "worker": job.lease_owner or "-",
                "host": owner.host if owner else job.host or "-",
                "last_seen": owner.heartbeat_at if owner else None,
                "taken_over_at": ends,
                "live_worker": live is not None,
                "requeued": again,
            }
            # Named only where the table allows it: a deploy has no /cancel, it is taken over.
            cancel = find(A.CANCEL, s.phase, s.kind, s.failure_stage) is not None
            return Hold(HoldKind.LEASE_LOST, facts, commands_for((A.CANCEL,) if cancel else ()))
        facts |= {"host": owner.host, "since": job.started_at or job.created_at}
        return Hold(HoldKind.RUNNING, facts)
    if s.day_budget_spent and job.kind != DEPLOY_JOB:
        return Hold(HoldKind.DAY_BUDGET, facts, ("/allow",))
    if job.not_before is not None and job.not_before > s.now:
        # Not the work's failure: it runs again by itself at the reset time.
        facts |= {"until": job.not_before, "detail": job.error or "-"}
        return Hold(HoldKind.QUOTA, facts)
    if _serving(s, job.lane) is None:
        seen = [w for w in s.workers if job.lane in w.lanes]
        last = max(seen, key=lambda w: w.heartbeat_at) if seen else None
        facts |= {
            "host": last.host if last else None,
            "last_seen": last.heartbeat_at if last else None,
        }
        return Hold(HoldKind.NO_WORKER, facts)
    if s.ahead:
        return Hold(HoldKind.LANE, facts | {"count": len(s.ahead), "cards": list(s.ahead)})
    return Hold(HoldKind.QUEUED, facts)


def _live(s: Snapshot) -> WorkerSnap | None:
    return next((w for w in s.workers if w.expires_at >= s.now), None)


def _serving(s: Snapshot, lane: str) -> WorkerSnap | None:
    return next((w for w in s.workers if lane in w.lanes and w.expires_at >= s.now), None)
