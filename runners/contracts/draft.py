"""Planner, draft mode: one intake turn returns a question or a finished intent."""

from __future__ import annotations

import re

from pydantic import BaseModel

from runners.contracts.errors import ContractError
from runners.contracts.markers import (
    DRAFT_INTENT,
    DRAFT_QUESTION,
    has_block,
    normalise_answer,
    single_block,
)
from runners.contracts.question import Question, parse_question
from runners.contracts.validation import STRICT, NonBlank, Slug, build, shown
from runners.profiles import SLUG_RE

_DASHES_RE = re.compile(r"[ \t]*-{3,}[ \t]*")


class DraftQuestion(Question):
    """A follow-up question for the owner; the conversation continues with the answer."""


class DraftIntent(BaseModel):
    """A finished intent; the wrapper writes `body` to docs/intent/<slug>.md."""

    model_config = STRICT

    slug: Slug
    body: NonBlank


DraftAnswer = DraftQuestion | DraftIntent


def parse_draft(answer: str) -> DraftAnswer:
    """Exactly one of the two blocks; both or neither is rejected, never guessed."""
    text = normalise_answer(answer)
    asks = has_block(text, DRAFT_QUESTION)
    writes = has_block(text, DRAFT_INTENT)
    if asks and writes:
        raise ContractError(
            DRAFT_QUESTION.start,
            f"answer holds both {DRAFT_QUESTION.start} and {DRAFT_INTENT.start}",
        )
    if not asks and not writes:
        raise ContractError(
            DRAFT_QUESTION.start,
            f"answer holds neither {DRAFT_QUESTION.start} nor {DRAFT_INTENT.start}",
        )
    if asks:
        block = single_block(text, DRAFT_QUESTION)
        return parse_question(block.content, DRAFT_QUESTION.start, DraftQuestion)
    block = single_block(text, DRAFT_INTENT)
    slug, body = parse_slug_document(block.content, DRAFT_INTENT.start)
    return build(DraftIntent, DRAFT_INTENT.start, slug=slug, body=body)


def parse_slug_document(content: str, field: str) -> tuple[str, str]:
    """`slug: <slug>`, a line of three or more dashes, then the document.

    Used by draft intents and split children. Read line by line rather than with
    one regex, so a hostile header line cannot make matching slow.
    """
    header, _, rest = content.strip().partition("\n")
    dashes, _, body = rest.partition("\n")
    if not header.startswith("slug:") or _DASHES_RE.fullmatch(dashes) is None:
        raise ContractError(f"{field}.slug", "must start with 'slug: <slug>' and a '---' line")
    slug, body = header[len("slug:") :].strip(), body.strip()
    if SLUG_RE.fullmatch(slug) is None:
        raise ContractError(
            f"{field}.slug", f"{shown(slug)} is not a slug (^[a-z0-9][a-z0-9-]{{0,60}}$)"
        )
    if not body:
        raise ContractError(f"{field}.body", f"intent {slug!r} has no content")
    return slug, body
