"""Which model run a phase asks for: entering the phase queues that role's job."""

from __future__ import annotations

from chatbot.domain.phases import Phase

ROLE_FOR_PHASE: dict[Phase, str] = {
    Phase.OPERATOR_RUNNING: "operator",
    Phase.BUILDING: "builder",
    Phase.REVIEWING: "reviewer",
    Phase.SPLIT_REQUESTED: "planner",
    Phase.DRAFT_RUNNING: "planner",
    Phase.RESEARCH_REQUESTED: "researcher",
    Phase.INSPECTOR_RUNNING: "inspector",
    Phase.FIXER_RUNNING: "fixer",
}

# Roles that change files run in a builder lane; the others share one lane per role.
WRITING_ROLES = frozenset({"builder", "fixer"})
DEPLOY_JOB = "deploy"


def job_lane(role: str, card_lane: str | None, default_lane: str) -> str:
    if role in WRITING_ROLES:
        return card_lane or default_lane
    return f"role:{role}"
