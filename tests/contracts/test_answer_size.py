"""The answer size limit, for every role's parser: at the limit a valid answer parses,
one character over it is refused before anything else is looked at."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from runners.contracts import (
    BuilderAnswer,
    DraftIntent,
    DraftQuestion,
    FixerQuestion,
    TrustedDeployment,
    parse_builder_answer,
    parse_draft,
    parse_fixer_answer,
    parse_inspection,
    parse_operator_decision,
    parse_research,
    parse_review,
    parse_routing,
    parse_split,
    parse_synthesis,
    routing_actions,
)
from runners.contracts.markers import MAX_ANSWER_CHARS
from tests.contracts.helpers import (
    COMMIT,
    PARENT,
    TEST_ALLOWED,
    direct_decision,
    expect_error,
    operator_answer,
)

EVIDENCE = [{"source": "src/report.py", "finding": "export_csv exists"}]
INSPECTION = {
    "schema_version": 1,
    "mode": "implementation_status",
    "repository_status": "present",
    "deployment_status": "unknown",
    "checked_revision": COMMIT,
    "repository_evidence": EVIDENCE,
    "deployment_evidence": [],
    "summary": "Implemented.",
    "question": None,
    "required_action": None,
}
ROUTING = {
    "schema_version": 1,
    "mode": "route_next",
    "outcome": "recommendation",
    "recommended_action": "building_light",
    "basis": EVIDENCE,
    "summary": "A small fix remains.",
    "question": None,
    "required_action": None,
}
COMMIT_AND_REPORT = (
    "===COMMIT-MESSAGE===\nAdd CSV export\n===END-COMMIT-MESSAGE===\n"
    "===BUILDER-REPORT===\nChanged x.\n===END-BUILDER-REPORT==="
)

# Each role: its parser (with the trusted context it needs), a valid answer, and what
# the parsed answer must show, so "passes the size check" means it really parsed.
ROLES: dict[str, tuple[Callable[[str], Any], str, Callable[[Any], bool]]] = {
    "operator": (
        lambda text: parse_operator_decision(text, TEST_ALLOWED, PARENT),
        operator_answer(direct_decision()),
        lambda parsed: parsed.decision == "direct_builder",
    ),
    "review": (
        lambda text: parse_review(text, COMMIT),
        "===REVIEW-REPORT===\n# Review\n===END-REVIEW-REPORT===\n===REVIEW-RESULT===\n"
        + json.dumps({"schema_version": 1, "commit_hash": COMMIT, "decision": "approve"})
        + "\n===END-REVIEW-RESULT===",
        lambda parsed: parsed.verdict.decision == "approve",
    ),
    "research": (
        parse_research,
        "===RESEARCH-REPORT===\n# Research\n===END-RESEARCH-REPORT===",
        lambda parsed: parsed.report == "# Research",
    ),
    "split": (
        lambda text: parse_split(text, PARENT),
        "===SPLIT-REPORT===\n===CHILD===\nslug: a-part\n---\nbody\n===END-CHILD===\n"
        "===END-SPLIT-REPORT===",
        lambda parsed: [child.slug for child in parsed.children] == ["a-part"],
    ),
    "draft-question": (
        parse_draft,
        "===DRAFT-QUESTION===\nWhich?\noptions: a | b\n===END-DRAFT-QUESTION===",
        lambda parsed: isinstance(parsed, DraftQuestion) and parsed.options == ("a", "b"),
    ),
    "draft-intent": (
        parse_draft,
        "===DRAFT-INTENT===\nslug: csv-export\n---\n# Intent\n===END-DRAFT-INTENT===",
        lambda parsed: isinstance(parsed, DraftIntent) and parsed.slug == "csv-export",
    ),
    "inspection": (
        lambda text: parse_inspection(text, TrustedDeployment(status="unknown")),
        f"===INSPECTION_RESULT===\n{json.dumps(INSPECTION)}\n===END_INSPECTION_RESULT===",
        lambda parsed: parsed.repository_status == "present",
    ),
    "routing": (
        lambda text: parse_routing(text, routing_actions(TEST_ALLOWED)),
        f"===ROUTING_RESULT===\n{json.dumps(ROUTING)}\n===END_ROUTING_RESULT===",
        lambda parsed: parsed.recommended_action == "building_light",
    ),
    "builder": (
        parse_builder_answer,
        COMMIT_AND_REPORT,
        lambda parsed: parsed.commit_message.subject == "Add CSV export",
    ),
    "fixer-commit": (
        parse_fixer_answer,
        COMMIT_AND_REPORT,
        lambda parsed: isinstance(parsed, BuilderAnswer),
    ),
    "fixer-question": (
        parse_fixer_answer,
        "===FIXER-QUESTION===\nZero or negative?\n===END-FIXER-QUESTION===",
        lambda parsed: isinstance(parsed, FixerQuestion),
    ),
    "synthesis": (
        lambda text: parse_synthesis(text, ["a-part", "b-part"]),
        "===SYNTHESIS-REPORT===\n# Synthesis\n===END-SYNTHESIS-REPORT===\n"
        "===SYNTHESIS-RESULT===\n"
        + json.dumps({"schema_version": 1, "children": ["a-part", "b-part"], "gaps": []})
        + "\n===END-SYNTHESIS-RESULT===",
        lambda parsed: parsed.children == ("a-part", "b-part"),
    ),
}


def padded(answer: str, size: int) -> str:
    """The answer after blank lines that bring it to exactly `size` characters (some
    parsers refuse prose outside their block; every one takes whitespace there)."""
    return "\n" * (size - len(answer)) + answer


@pytest.mark.parametrize("role", ROLES)
def test_an_answer_at_the_limit_parses(role: str) -> None:
    parse, answer, shows = ROLES[role]
    text = padded(answer, MAX_ANSWER_CHARS)
    assert len(text) == MAX_ANSWER_CHARS
    assert shows(parse(text))


@pytest.mark.parametrize("role", ROLES)
def test_an_answer_one_character_over_the_limit_is_refused(role: str) -> None:
    parse, answer, _ = ROLES[role]
    text = padded(answer, MAX_ANSWER_CHARS + 1)
    error = expect_error(lambda: parse(text), "answer")
    assert str(error) == f"answer: longer than {MAX_ANSWER_CHARS} characters"
