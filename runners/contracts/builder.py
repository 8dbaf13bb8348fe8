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
#: Files of its worktree a report may offer the owner (`Artifacts: a.png, b.html`).
MAX_ARTIFACTS = 5

# A path in the worktree, relative, in plain characters: nothing a shell, an option
# parser or a traversal could make more of; no part may start with a dot (no `..`,
# no `.git`, no hidden files).
_ARTIFACT_RE = re.compile(
    r"^(?!/)(?:[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,99}/){0,9}[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,99}$"
)
_ARTIFACTS_LINE_RE = re.compile(r"^\s*artifacts?\s*:\s*(.*)$", re.IGNORECASE | re.MULTILINE)

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
    #: Files of the worktree the report offers the owner (a screenshot, a rendered page).
    artifacts: tuple[str, ...] = ()


def parse_artifacts(report: str) -> tuple[str, ...]:
    """The paths of the report's `Artifacts:` line(s); a malformed one rejects the answer."""
    field = f"{BUILDER_REPORT.start}.artifacts"
    found: list[str] = []
    for line in _ARTIFACTS_LINE_RE.findall(report):
        for raw in line.split(","):
            path = raw.strip().strip("`")
            if not path:
                continue
            if not _ARTIFACT_RE.fullmatch(path):
                raise ContractError(
                    field, f"{path[:80]!r} is not a plain relative path in the worktree"
                )
            if path not in found:
                found.append(path)
    if len(found) > MAX_ARTIFACTS:
        raise ContractError(field, f"{len(found)} files, at most {MAX_ARTIFACTS} allowed")
    return tuple(found)


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
    return build(
        BuilderAnswer,
        BUILDER_REPORT.start,
        commit_message=commit_message,
        report=content,
        artifacts=parse_artifacts(content),
    )
