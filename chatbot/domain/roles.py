"""The job table: every fact about a kind of job, one record per kind.

In the spirit of arq's `Function` record, which keeps a job's policy with its
function: whatever needs to know something about a role (which phase queues it,
whether it may write, whether a run cut off by a crash may simply run again, which
profile it runs with, which lane it queues in, which prompt templates it reads,
which marker blocks its answer is made of, what it is granted, and the pipeline
coroutine that runs it) looks it up here. `JOBS` maps a job's kind to its record;
the worker has no table of its own. The coroutine is named ("module:function") and
found by the worker, so this pure table imports nothing above it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from chatbot.domain.phases import Phase
from runners.contracts import markers as m
from runners.contracts.markers import Marker
from runners.runtimes.base import Grant


class ProfileFrom(StrEnum):
    """Where a run's runtime, model and limits come from."""

    #: The card's own profile, as the operator chose it from the lanes (escalation
    #: may change its model); the job queues in the card's lane.
    LANE = "lane"
    #: The role's own `[roles.<name>]` section; the job queues in the role's lane.
    ROLE = "role"


@dataclass(frozen=True)
class JobKind:
    """A kind of job the worker runs: its name (the job's `kind`), the pipeline
    coroutine that runs it, and whether a run cut off by a crash may run again."""

    name: str
    #: "module:function" of the coroutine that runs the job (it takes a JobContext).
    runs: str
    #: A run cut off by a crash may run again: it only read, and its answer was
    #: never applied. A writer may have half-changed its worktree: a person decides.
    repeatable: bool


@dataclass(frozen=True)
class Role(JobKind):
    """A model role: a job kind whose run is an agent CLI's."""

    #: Entering one of these phases queues this role's job.
    phases: frozenset[Phase]
    #: Works in the card's own git worktree with a writable sandbox; the bot commits.
    #: Everything else runs read-only and only proposes.
    writes: bool
    profile_from: ProfileFrom
    #: Its prompt templates in roles/ (one per mode).
    templates: tuple[str, ...]
    #: Its output contract: the marker blocks its answers are made of (the parsers in
    #: runners/contracts read exactly these; its templates must name each of them).
    contract: tuple[Marker, ...]
    #: What a read-only run may do besides reading files (the git reads a reviewer or an
    #: inspector needs), named abstractly: each runtime writes it in its own syntax
    #: (Claude Code's `--allowedTools` rules; codex's read-only sandbox needs none).
    grants: tuple[Grant, ...] = ()
    #: Its runs go through the CLI's interactive protocol where the runtime has one
    #: (`Runtime.talking`): owners may steer it, interrupt it and answer what it asks.
    talks: bool = False

    @property
    def approvals_default(self) -> str:
        """Whether its approval requests go to the owners ("ask") or are refused at once."""
        return "ask" if self.writes else "deny"

    def lane(self, card_lane: str | None, default_lane: str) -> str:
        if self.profile_from is ProfileFrom.LANE:
            return card_lane or default_lane
        return role_lane(self.name)


P = Phase
LANE, ROLE = ProfileFrom.LANE, ProfileFrom.ROLE
ROLES: tuple[Role, ...] = (
    Role(
        "operator",
        runs="chatbot.pipeline.planning:run_operator",
        phases=frozenset({P.OPERATOR_RUNNING}),
        writes=False,
        repeatable=True,
        profile_from=ROLE,
        templates=("operator",),
        contract=(m.OPERATOR_DECISION,),
    ),
    Role(
        "planner",
        runs="chatbot.pipeline.planning:run_planner",
        phases=frozenset({P.SPLIT_REQUESTED, P.DRAFT_RUNNING}),
        writes=False,
        repeatable=True,
        profile_from=ROLE,
        templates=("planner-split", "planner-draft"),
        contract=(m.SPLIT_REPORT, m.SPLIT_CHILD, m.DRAFT_QUESTION, m.DRAFT_INTENT),
    ),
    Role(
        "builder",
        runs="chatbot.pipeline.building:run_builder",
        phases=frozenset({P.BUILDING}),
        writes=True,
        repeatable=False,
        profile_from=LANE,
        templates=("builder", "builder-continue"),
        contract=(m.COMMIT_MESSAGE, m.BUILDER_REPORT),
        talks=True,
    ),
    Role(
        "reviewer",
        runs="chatbot.pipeline.checking:run_reviewer",
        phases=frozenset({P.REVIEWING}),
        writes=False,
        repeatable=True,
        profile_from=ROLE,
        templates=("reviewer",),
        contract=(m.REVIEW_REPORT, m.REVIEW_RESULT),
        grants=(Grant.GIT_READS,),
    ),
    Role(
        "researcher",
        runs="chatbot.pipeline.checking:run_researcher",
        phases=frozenset({P.RESEARCH_REQUESTED}),
        writes=False,
        repeatable=True,
        profile_from=ROLE,
        templates=("researcher",),
        contract=(m.RESEARCH_REPORT,),
    ),
    Role(
        "inspector",
        runs="chatbot.pipeline.checking:run_inspector",
        phases=frozenset({P.INSPECTOR_RUNNING}),
        writes=False,
        repeatable=True,
        profile_from=ROLE,
        templates=("inspector-implementation-status", "inspector-route-next"),
        contract=(m.INSPECTION_RESULT, m.ROUTING_RESULT),
        # Its prompts ask for git commands (tests/contracts/test_role_grants.py).
        grants=(Grant.GIT_READS,),
    ),
    # Like the builder it works on the card with the card's own profile and iteration
    # limit (the reference does the same), in the card's lane.
    Role(
        "fixer",
        runs="chatbot.pipeline.building:run_fixer",
        phases=frozenset({P.FIXER_RUNNING}),
        writes=True,
        repeatable=False,
        profile_from=LANE,
        templates=("fixer",),
        contract=(m.FIXER_QUESTION, m.COMMIT_MESSAGE, m.BUILDER_REPORT),
        talks=True,
    ),
    # Summarises what the children of a split changed against the parent's intent.
    Role(
        "synthesis",
        runs="chatbot.pipeline.synthesis:run_synthesis",
        phases=frozenset({P.SYNTHESIS_RUNNING}),
        writes=False,
        repeatable=True,
        profile_from=ROLE,
        templates=("synthesis",),
        contract=(m.SYNTHESIS_REPORT, m.SYNTHESIS_RESULT),
        grants=(Grant.GIT_READS,),
    ),
)
BY_NAME: dict[str, Role] = {role.name: role for role in ROLES}
FOR_PHASE: dict[Phase, Role] = {phase: role for role in ROLES for phase in role.phases}

#: Not a model role: merging an approved commit and running the deploy command.
#: It may have half-happened, so like a writer it is never repeated on its own.
DEPLOY = JobKind("deploy", runs="chatbot.pipeline.deploying:run_deploy", repeatable=False)
DEPLOY_JOB = DEPLOY.name
#: Every kind of job, by the name a job row carries.
JOBS: dict[str, JobKind] = {**BY_NAME, DEPLOY.name: DEPLOY}


def role_lane(name: str) -> str:
    """The lane of a role that has none of the card's: one per role, its own limit."""
    return f"role:{name}"


def lane_role(lane: str) -> str | None:
    """The role whose own lane `lane` is (see role_lane), or None for a configured lane."""
    name = lane.removeprefix("role:")
    return name if name != lane else None


def is_repeatable(kind: str) -> bool:
    job = JOBS.get(kind)
    return job is not None and job.repeatable
