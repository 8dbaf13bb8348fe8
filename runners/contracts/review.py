"""Reviewer contract: a report plus exactly one machine-readable verdict on one commit."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from runners.contracts.errors import ContractError
from runners.contracts.markers import (
    REVIEW_REPORT,
    REVIEW_RESULT,
    lenient_single_block,
    normalise_answer,
    single_block,
)
from runners.contracts.validation import (
    STRICT,
    NonBlank,
    SchemaVersion,
    build,
    shown,
    validate_json,
)


class ReviewVerdict(BaseModel):
    """The JSON inside ===REVIEW-RESULT===; these three fields and no others."""

    model_config = STRICT

    schema_version: SchemaVersion
    commit_hash: str
    decision: Literal["approve", "reject"]


class ReviewAnswer(BaseModel):
    """`report` becomes docs/review/<slug>.md; approve queues the deployment."""

    model_config = STRICT

    report: NonBlank
    verdict: ReviewVerdict


def parse_review(answer: str, reviewed_commit: str) -> ReviewAnswer:
    """The verdict must name `reviewed_commit`, so an approval cannot drift to another commit.

    Prose around the blocks is tolerated (reviewers explain themselves); a second
    verdict is not, because which one counts would be a guess.
    """
    text = normalise_answer(answer)
    result = single_block(text, REVIEW_RESULT)
    report = lenient_single_block(text, REVIEW_REPORT, stop=REVIEW_RESULT.start)
    if report.start < result.start < report.end:
        raise ContractError(REVIEW_RESULT.start, "must not sit inside the review report")
    content = report.content.strip()
    if not content:
        raise ContractError(REVIEW_REPORT.start, "the review report is empty")
    verdict = validate_json(ReviewVerdict, result.content, REVIEW_RESULT.start)
    if verdict.commit_hash != reviewed_commit:
        raise ContractError(
            "commit_hash",
            f"{shown(verdict.commit_hash)} is not the reviewed commit {reviewed_commit!r}",
        )
    return build(ReviewAnswer, REVIEW_REPORT.start, report=content, verdict=verdict)
