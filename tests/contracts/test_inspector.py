"""Inspector contracts (implementation_status and route_next), table-driven."""

from __future__ import annotations

import json
from typing import Any

import pytest

from runners.contracts import Evidence, TrustedDeployment, parse_inspection, parse_routing
from runners.contracts.inspector import routing_actions
from tests.contracts.helpers import COMMIT, DELETE, TEST_ALLOWED, expect_error, mutated

WRAPPER = TrustedDeployment(
    status="deployed",
    evidence=(Evidence(source="deploy job demo:abc", finding="exit 0 at 12:00"),),
)
ACTIONS = routing_actions(TEST_ALLOWED)


def inspection(**changes: Any) -> dict[str, Any]:
    value = {
        "schema_version": 1,
        "mode": "implementation_status",
        "repository_status": "present",
        "deployment_status": "deployed",
        "checked_revision": COMMIT,
        "repository_evidence": [{"source": "src/report.py", "finding": "export_csv exists"}],
        "deployment_evidence": [{"source": "wrapper", "finding": "deployed"}],
        "summary": "Implemented and deployed.",
        "question": None,
        "required_action": None,
    }
    return value | changes


def block(value: Any, start: str = "===INSPECTION_RESULT===") -> str:
    end = start.replace("===", "===END_", 1)
    body = value if isinstance(value, str) else json.dumps(value)
    return f"{start}\n{body}\n{end}"


def test_matching_status_is_not_a_discrepancy() -> None:
    result = parse_inspection("I looked.\n" + block(inspection()) + "\nDone.", WRAPPER)
    assert result.deployment_status == "deployed"
    assert result.deployment_evidence == WRAPPER.evidence
    assert result.deployment_status_discrepancy is False
    assert result.model_deployment_status is None
    assert result.repository_status == "present"


def test_wrapper_evidence_replaces_the_model_and_flags_disagreement() -> None:
    trusted = TrustedDeployment(status="not_deployed")
    result = parse_inspection(block(inspection()), trusted)
    assert result.deployment_status == "not_deployed"
    assert result.model_deployment_status == "deployed"
    assert result.deployment_status_discrepancy is True
    # With no evidence of its own the wrapper still states what it knows.
    assert result.deployment_evidence == (
        Evidence(source="wrapper", finding="wrapper status: not_deployed"),
    )


def test_one_code_fence_inside_the_block_is_tolerated() -> None:
    fenced = "```json\n" + json.dumps(inspection(), indent=2) + "\n```"
    assert parse_inspection(block(fenced), WRAPPER).summary == "Implemented and deployed."


def test_unverifiable_and_unknown_may_come_without_evidence() -> None:
    value = inspection(
        repository_status="unverifiable",
        deployment_status="unknown",
        repository_evidence=[],
        deployment_evidence=[],
        checked_revision=None,
        question="Which branch holds the work?",
        required_action="Name the branch.",
    )
    result = parse_inspection(block(value), TrustedDeployment(status="unknown"))
    assert result.repository_evidence == ()
    assert result.question == "Which branch holds the work?"


INVALID_INSPECTION = [
    ("missing", json.dumps(inspection()), "===INSPECTION_RESULT==="),
    ("two-blocks", block(inspection()) + block(inspection()), "===INSPECTION_RESULT==="),
    ("not-json", block("present"), "===INSPECTION_RESULT==="),
    ("two-fences", block("```json\n{}\n```\n```json\n{}\n```"), "===INSPECTION_RESULT==="),
    ("unknown-field", block(inspection(confidence="high")), "confidence"),
    (
        "old-field-name",
        block(
            mutated(inspection(), "deployment_status", DELETE)
            | {"blunix_deployment_status": "deployed"}
        ),
        "deployment_status",
    ),
    ("missing-field", block(mutated(inspection(), "summary", DELETE)), "summary"),
    ("schema-version-true", block(inspection(schema_version=True)), "schema_version"),
    ("wrong-mode", block(inspection(mode="route_next")), "mode"),
    ("repository-status", block(inspection(repository_status="done")), "repository_status"),
    ("deployment-status", block(inspection(deployment_status="live")), "deployment_status"),
    ("revision-short", block(inspection(checked_revision=COMMIT[:12])), "checked_revision"),
    ("revision-upper", block(inspection(checked_revision=COMMIT.upper())), "checked_revision"),
    ("repository-evidence-empty", block(inspection(repository_evidence=[])), "repository_evidence"),
    ("deployment-evidence-empty", block(inspection(deployment_evidence=[])), "deployment_evidence"),
    (
        "evidence-extra-key",
        block(inspection(repository_evidence=[{"source": "a", "finding": "b", "line": 3}])),
        "repository_evidence[0].line",
    ),
    (
        "evidence-empty-source",
        block(inspection(repository_evidence=[{"source": "", "finding": "b"}])),
        "repository_evidence[0].source",
    ),
    (
        "evidence-not-object",
        block(inspection(repository_evidence=["src/report.py"])),
        "repository_evidence[0]",
    ),
    ("summary-empty", block(inspection(summary="")), "summary"),
    ("question-empty", block(inspection(question="")), "question"),
    ("action-number", block(inspection(required_action=5)), "required_action"),
]


@pytest.mark.parametrize(
    ("answer", "field"), [c[1:] for c in INVALID_INSPECTION], ids=[c[0] for c in INVALID_INSPECTION]
)
def test_invalid_inspection(answer: str, field: str) -> None:
    expect_error(lambda: parse_inspection(answer, WRAPPER), field)


def routing(**changes: Any) -> dict[str, Any]:
    value = {
        "schema_version": 1,
        "mode": "route_next",
        "outcome": "recommendation",
        "recommended_action": "building_light",
        "basis": [{"source": "docs/review/demo.md", "finding": "one small fix left"}],
        "summary": "A small fix remains.",
        "question": None,
        "required_action": None,
    }
    return value | changes


R = "===ROUTING_RESULT==="

VALID_ROUTING = [
    ("recommendation", routing()),
    (
        "needs-input-without-basis",
        routing(
            outcome="needs_input",
            recommended_action=None,
            basis=[],
            question="Keep or drop?",
            required_action="Decide.",
        ),
    ),
    ("no-action", routing(outcome="no_action", recommended_action=None)),
]


@pytest.mark.parametrize("value", [c[1] for c in VALID_ROUTING], ids=[c[0] for c in VALID_ROUTING])
def test_valid_routing(value: dict[str, Any]) -> None:
    assert parse_routing(block(value, R), ACTIONS).model_dump(mode="json") == value


INVALID_ROUTING = [
    ("missing", json.dumps(routing()), R),
    ("wrong-mode", block(routing(mode="implementation_status"), R), "mode"),
    ("outcome", block(routing(outcome="maybe"), R), "outcome"),
    ("action-not-allowed", block(routing(recommended_action="deployed"), R), "recommended_action"),
    (
        "action-unknown-lane",
        block(routing(recommended_action="building_medium"), R),
        "recommended_action",
    ),
    ("action-null", block(routing(recommended_action=None), R), "recommended_action"),
    ("recommendation-with-question", block(routing(question="Sure?"), R), "question"),
    ("recommendation-without-basis", block(routing(basis=[]), R), "basis"),
    (
        "needs-input-with-action",
        block(routing(outcome="needs_input", question="q", required_action="a"), R),
        "recommended_action",
    ),
    (
        "needs-input-without-question",
        block(routing(outcome="needs_input", recommended_action=None, required_action="a"), R),
        "question",
    ),
    (
        "needs-input-without-required-action",
        block(routing(outcome="needs_input", recommended_action=None, question="q"), R),
        "required_action",
    ),
    ("no-action-with-action", block(routing(outcome="no_action"), R), "recommended_action"),
    (
        "no-action-with-question",
        block(routing(outcome="no_action", recommended_action=None, question="q"), R),
        "question",
    ),
    ("unknown-field", block(routing(priority=1), R), "priority"),
    ("basis-bad-item", block(routing(basis=[{"source": "a"}]), R), "basis[0].finding"),
]


@pytest.mark.parametrize(
    ("answer", "field"), [c[1:] for c in INVALID_ROUTING], ids=[c[0] for c in INVALID_ROUTING]
)
def test_invalid_routing(answer: str, field: str) -> None:
    expect_error(lambda: parse_routing(answer, ACTIONS), field)


def test_routing_actions_follow_the_configured_lanes() -> None:
    assert ACTIONS == (
        "planned",
        "building_heavy",
        "building_light",
        "reviewing",
        "archived",
        "research_requested",
        "research_running",
    )
