"""Marker tokens of every role answer and the block finders shared by the parsers.

The tokens are the wire format agreed with the models; the prompt templates in
roles/ spell them literally, and a test checks that each template names the
markers its parser expects, so the two cannot drift apart.

Block finding uses plain `str.find`/`str.count` instead of regexes: answers
can be large and hostile, and a lazy `.*?` across many start markers costs
quadratic time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from runners.contracts.errors import ContractError

# Anything shaped like a marker, including ones we do not (yet) use: the prompt
# fence neutralises all of them so no data can impersonate a future marker either.
MARKER_TOKEN_RE = re.compile(r"===([A-Z][A-Z0-9_-]*)===")

# Model answers are at most a few hundred kilobytes; a bound keeps every later
# step (JSON, graph checks) cheap even for a runaway answer.
MAX_ANSWER_CHARS = 1_000_000


@dataclass(frozen=True)
class Marker:
    start: str
    end: str

    @classmethod
    def dashed(cls, name: str) -> Marker:
        return cls(f"==={name}===", f"===END-{name}===")


OPERATOR_DECISION = Marker.dashed("OPERATOR-DECISION")
REVIEW_REPORT = Marker.dashed("REVIEW-REPORT")
REVIEW_RESULT = Marker.dashed("REVIEW-RESULT")
RESEARCH_REPORT = Marker.dashed("RESEARCH-REPORT")
SPLIT_REPORT = Marker.dashed("SPLIT-REPORT")
SPLIT_CHILD = Marker.dashed("CHILD")
DRAFT_QUESTION = Marker.dashed("DRAFT-QUESTION")
DRAFT_INTENT = Marker.dashed("DRAFT-INTENT")
# The inspector markers use underscores where the others use dashes: the roles
# prompt them that way, and the parser must read exactly what they are told to write.
INSPECTION_RESULT = Marker("===INSPECTION_RESULT===", "===END_INSPECTION_RESULT===")
ROUTING_RESULT = Marker("===ROUTING_RESULT===", "===END_ROUTING_RESULT===")
COMMIT_MESSAGE = Marker.dashed("COMMIT-MESSAGE")
BUILDER_REPORT = Marker.dashed("BUILDER-REPORT")
FIXER_QUESTION = Marker.dashed("FIXER-QUESTION")
SYNTHESIS_REPORT = Marker.dashed("SYNTHESIS-REPORT")
SYNTHESIS_RESULT = Marker.dashed("SYNTHESIS-RESULT")

ALL_MARKERS: tuple[Marker, ...] = (
    OPERATOR_DECISION,
    REVIEW_REPORT,
    REVIEW_RESULT,
    RESEARCH_REPORT,
    SPLIT_REPORT,
    SPLIT_CHILD,
    DRAFT_QUESTION,
    DRAFT_INTENT,
    INSPECTION_RESULT,
    ROUTING_RESULT,
    COMMIT_MESSAGE,
    BUILDER_REPORT,
    FIXER_QUESTION,
    SYNTHESIS_REPORT,
    SYNTHESIS_RESULT,
)


@dataclass(frozen=True)
class Block:
    """The text between a start and an end marker, with its position in the answer."""

    content: str
    start: int  # index of the start marker
    end: int  # index just past the end marker (or of the answer, for a lenient block)


def normalise_answer(answer: object) -> str:
    """Reject what is not text at all; unify line endings so line rules see one form."""
    if not isinstance(answer, str):
        raise ContractError("answer", "must be text")
    if len(answer) > MAX_ANSWER_CHARS:
        raise ContractError("answer", f"longer than {MAX_ANSWER_CHARS} characters")
    try:
        answer.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ContractError("answer", "is not valid Unicode text") from error
    if "\x00" in answer:
        # No agent writes NUL on purpose, and it must never reach a file or a commit.
        raise ContractError("answer", "contains NUL characters")
    return answer.replace("\r\n", "\n").replace("\r", "\n")


def has_block(text: str, marker: Marker) -> bool:
    return marker.start in text or marker.end in text


def single_block(text: str, marker: Marker) -> Block:
    """Exactly one start marker followed by exactly one end marker."""
    starts = text.count(marker.start)
    ends = text.count(marker.end)
    if starts == 0:
        raise ContractError(marker.start, "block is missing")
    if starts > 1:
        raise ContractError(marker.start, f"appears {starts} times, exactly one block allowed")
    if ends == 0:
        raise ContractError(marker.end, "end marker is missing")
    if ends > 1:
        raise ContractError(marker.end, f"appears {ends} times, exactly one allowed")
    begin = text.index(marker.start)
    finish = text.index(marker.end)
    if finish < begin:
        raise ContractError(marker.end, "end marker comes before the start marker")
    return Block(text[begin + len(marker.start) : finish], begin, finish + len(marker.end))


def lenient_single_block(text: str, marker: Marker, stop: str | None = None) -> Block:
    """One start marker; a missing or misplaced end marker means "to the end".

    Reviewers have been seen to finish a complete report and forget the closing
    marker. Recovering that report is safe because the separate result block is
    still mandatory. `stop` ends the fallback early at the next block's marker so
    the recovered report does not swallow it.
    """
    starts = text.count(marker.start)
    if starts == 0:
        raise ContractError(marker.start, "block is missing")
    if starts > 1:
        raise ContractError(marker.start, f"appears {starts} times, exactly one block allowed")
    ends = text.count(marker.end)
    if ends > 1:
        raise ContractError(marker.end, f"appears {ends} times, at most one allowed")
    begin = text.index(marker.start)
    content_start = begin + len(marker.start)
    finish = text.find(marker.end)
    if finish >= content_start:
        return Block(text[content_start:finish], begin, finish + len(marker.end))
    limit = len(text)
    if stop is not None:
        stop_at = text.find(stop, content_start)
        if stop_at != -1:
            limit = stop_at
    return Block(text[content_start:limit], begin, limit)


def reject_text_outside(text: str, block: Block, marker: Marker) -> None:
    if text[: block.start].strip():
        raise ContractError(marker.start, "text before the block is not allowed")
    if text[block.end :].strip():
        raise ContractError(marker.end, "text after the block is not allowed")
