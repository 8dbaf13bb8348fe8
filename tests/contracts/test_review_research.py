"""Reviewer and researcher contracts, table-driven."""

from __future__ import annotations

import json

import pytest

from runners.contracts import parse_research, parse_review
from tests.contracts.helpers import COMMIT, expect_error


def verdict(**changes: object) -> str:
    value = {"schema_version": 1, "commit_hash": COMMIT, "decision": "approve"} | changes
    return f"===REVIEW-RESULT===\n{json.dumps(value)}\n===END-REVIEW-RESULT==="


REPORT = "===REVIEW-REPORT===\n# Review\n\nNo blocking findings.\n===END-REVIEW-REPORT==="


def test_review_approve() -> None:
    parsed = parse_review(f"I checked the diff.\n{REPORT}\n{verdict()}\nDone.", COMMIT)
    assert parsed.verdict.decision == "approve"
    assert parsed.verdict.commit_hash == COMMIT
    assert parsed.report == "# Review\n\nNo blocking findings."


def test_review_reject() -> None:
    assert parse_review(REPORT + verdict(decision="reject"), COMMIT).verdict.decision == "reject"


def test_missing_report_end_falls_back_but_stops_at_the_result() -> None:
    answer = "===REVIEW-REPORT===\nFindings: none.\n\n" + verdict()
    assert parse_review(answer, COMMIT).report == "Findings: none."


def test_missing_report_end_without_a_following_result_takes_the_rest() -> None:
    answer = verdict(decision="reject") + "\n===REVIEW-REPORT===\nOne blocking bug."
    parsed = parse_review(answer, COMMIT)
    assert parsed.report == "One blocking bug."
    assert parsed.verdict.decision == "reject"


INVALID_REVIEW = [
    ("no-report", verdict(), "===REVIEW-REPORT==="),
    ("two-reports", REPORT + REPORT + verdict(), "===REVIEW-REPORT==="),
    ("two-report-ends", REPORT + "===END-REVIEW-REPORT===" + verdict(), "===END-REVIEW-REPORT==="),
    (
        "empty-report",
        "===REVIEW-REPORT===\n \n===END-REVIEW-REPORT===" + verdict(),
        "===REVIEW-REPORT===",
    ),
    ("no-result", REPORT, "===REVIEW-RESULT==="),
    ("two-results", REPORT + verdict() + verdict(decision="reject"), "===REVIEW-RESULT==="),
    (
        "result-without-end",
        REPORT + verdict().replace("===END-REVIEW-RESULT===", ""),
        "===END-REVIEW-RESULT===",
    ),
    (
        "result-inside-report",
        "===REVIEW-REPORT===\n" + verdict() + "\nok\n===END-REVIEW-REPORT===",
        "===REVIEW-RESULT===",
    ),
    (
        "result-not-json",
        REPORT + "===REVIEW-RESULT===\napprove\n===END-REVIEW-RESULT===",
        "===REVIEW-RESULT===",
    ),
    (
        "result-fenced",
        REPORT + "===REVIEW-RESULT===\n```json\n{}\n```\n===END-REVIEW-RESULT===",
        "===REVIEW-RESULT===",
    ),
    ("unknown-field", REPORT + verdict(comment="fine"), "comment"),
    ("missing-field", REPORT + verdict().replace(', "decision": "approve"', ""), "decision"),
    ("schema-version-2", REPORT + verdict(schema_version=2), "schema_version"),
    ("schema-version-true", REPORT + verdict(schema_version=True), "schema_version"),
    ("other-commit", REPORT + verdict(commit_hash="f" * 40), "commit_hash"),
    ("short-commit", REPORT + verdict(commit_hash=COMMIT[:12]), "commit_hash"),
    ("commit-number", REPORT + verdict(commit_hash=123), "commit_hash"),
    ("decision-approved", REPORT + verdict(decision="approved"), "decision"),
    ("decision-null", REPORT + verdict(decision=None), "decision"),
]


@pytest.mark.parametrize(
    ("answer", "field"), [c[1:] for c in INVALID_REVIEW], ids=[c[0] for c in INVALID_REVIEW]
)
def test_invalid_review(answer: str, field: str) -> None:
    expect_error(lambda: parse_review(answer, COMMIT), field)


def test_research_report() -> None:
    answer = (
        "Looked around.\n===RESEARCH-REPORT===\n# Research\n\nFindings.\n"
        "===END-RESEARCH-REPORT===\n"
    )
    assert parse_research(answer).report == "# Research\n\nFindings."


INVALID_RESEARCH = [
    ("missing", "# Research\nFindings.", "===RESEARCH-REPORT==="),
    ("empty", "===RESEARCH-REPORT===\n\n===END-RESEARCH-REPORT===", "===RESEARCH-REPORT==="),
    ("no-end", "===RESEARCH-REPORT===\nFindings.", "===END-RESEARCH-REPORT==="),
    (
        "end-first",
        "===END-RESEARCH-REPORT===\nx\n===RESEARCH-REPORT===",
        "===END-RESEARCH-REPORT===",
    ),
    (
        "two-blocks",
        "===RESEARCH-REPORT===\na\n===END-RESEARCH-REPORT===" * 2,
        "===RESEARCH-REPORT===",
    ),
]


@pytest.mark.parametrize(
    ("answer", "field"), [c[1:] for c in INVALID_RESEARCH], ids=[c[0] for c in INVALID_RESEARCH]
)
def test_invalid_research(answer: str, field: str) -> None:
    expect_error(lambda: parse_research(answer), field)
