"""Builder contract: the commit message the wrapper commits with, and a report.

The builder edits files in its own worktree but never commits; the wrapper
commits with this message (pass it with `git commit --cleanup=verbatim -F`, so
git keeps lines that start with `#`). The report is kept for the reviewer, a
later split and the owner.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from runners.contracts.errors import ContractError
from runners.contracts.markers import (
    BUILDER_REPORT,
    COMMIT_MESSAGE,
    normalise_answer,
    single_block,
)
from runners.contracts.validation import STRICT, NonBlank, build

MAX_SUBJECT_CHARS = 72
MAX_BODY_CHARS = 20_000

_BODY_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _subject(value: str) -> str:
    if not value or value != value.strip():
        raise ValueError("must be non-empty without surrounding whitespace")
    if _BODY_CONTROL_RE.search(value) or "\n" in value or "\t" in value:
        raise ValueError("must be one line without control characters")
    return value


class CommitMessage(BaseModel):
    model_config = STRICT

    subject: Annotated[str, AfterValidator(_subject), Field(max_length=MAX_SUBJECT_CHARS)]
    body: Annotated[str, Field(max_length=MAX_BODY_CHARS)]

    def text(self) -> str:
        """The full message in git's layout: subject, blank line, body."""
        return f"{self.subject}\n\n{self.body}\n" if self.body else f"{self.subject}\n"


class BuilderAnswer(BaseModel):
    model_config = STRICT

    commit_message: CommitMessage
    report: NonBlank


def parse_commit_message(content: str) -> CommitMessage:
    field = COMMIT_MESSAGE.start
    lines = content.strip("\n").split("\n")
    subject = lines[0].strip()
    if not subject:
        raise ContractError(f"{field}.subject", "the subject line must not be empty")
    if len(subject) > MAX_SUBJECT_CHARS:
        raise ContractError(
            f"{field}.subject", f"{len(subject)} characters, at most {MAX_SUBJECT_CHARS} allowed"
        )
    if _BODY_CONTROL_RE.search(subject) or "\t" in subject:
        raise ContractError(f"{field}.subject", "must not contain control characters")
    rest = lines[1:]
    if rest and rest[0].strip():
        raise ContractError(f"{field}.body", "a blank line must separate subject and body")
    body = "\n".join(line.rstrip() for line in rest).strip("\n")
    if _BODY_CONTROL_RE.search(body):
        raise ContractError(f"{field}.body", "must not contain control characters")
    if len(body) > MAX_BODY_CHARS:
        raise ContractError(f"{field}.body", f"longer than {MAX_BODY_CHARS} characters")
    return build(CommitMessage, field, subject=subject, body=body)


def parse_builder_answer(answer: str) -> BuilderAnswer:
    return builder_blocks(normalise_answer(answer))


def builder_blocks(text: str) -> BuilderAnswer:
    """Both blocks from an already normalised answer (shared with the fixer)."""
    message = single_block(text, COMMIT_MESSAGE)
    report = single_block(text, BUILDER_REPORT)
    if message.start < report.start < message.end or report.start < message.start < report.end:
        raise ContractError(BUILDER_REPORT.start, "the two blocks must not nest")
    content = report.content.strip()
    if not content:
        raise ContractError(BUILDER_REPORT.start, "the builder report is empty")
    commit_message = parse_commit_message(message.content)
    return build(BuilderAnswer, BUILDER_REPORT.start, commit_message=commit_message, report=content)
