"""Synthesis contract: after every child of a split succeeded, one report on what each
child changed and where the whole falls short of the parent's intent.

The report becomes docs/review/<parent>.md; the result block names every child the
report covers (exactly the parent's children, so none is forgotten) and the gaps
found, one line each (none: an empty list).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Annotated

from pydantic import BaseModel, Field

from runners.contracts.errors import ContractError
from runners.contracts.markers import (
    SYNTHESIS_REPORT,
    SYNTHESIS_RESULT,
    lenient_single_block,
    normalise_answer,
    single_block,
)
from runners.contracts.validation import (
    STRICT,
    NonBlank,
    SchemaVersion,
    SingleLine,
    Slug,
    check_json_object,
    shown,
    validate_json,
)

MAX_GAPS = 20
MAX_GAP_CHARS = 500


class SynthesisAnswer(BaseModel):
    """The JSON of ===SYNTHESIS-RESULT=== (these three fields) plus the report block."""

    model_config = STRICT

    schema_version: SchemaVersion
    children: tuple[Slug, ...]
    gaps: Annotated[
        tuple[Annotated[SingleLine, Field(max_length=MAX_GAP_CHARS)], ...],
        Field(max_length=MAX_GAPS),
    ]
    report: NonBlank


def parse_synthesis(answer: str, children: Collection[str]) -> SynthesisAnswer:
    """`children`: the parent's child slugs; the result must name each exactly once."""
    text = normalise_answer(answer)
    result = single_block(text, SYNTHESIS_RESULT)
    report = lenient_single_block(text, SYNTHESIS_REPORT, stop=SYNTHESIS_RESULT.start)
    if report.start < result.start < report.end:
        raise ContractError(SYNTHESIS_RESULT.start, "must not sit inside the synthesis report")
    content = report.content.strip()
    if not content:
        raise ContractError(SYNTHESIS_REPORT.start, "the synthesis report is empty")
    raw = result.content
    check_json_object(raw, SYNTHESIS_RESULT.start)
    values = json.loads(raw)
    if "report" in values:
        raise ContractError("report", "unknown field")
    parsed = validate_json(
        SynthesisAnswer, json.dumps({**values, "report": content}), SYNTHESIS_RESULT.start
    )
    named = list(parsed.children)
    for slug in named:
        if named.count(slug) > 1:
            raise ContractError("children", f"names {shown(slug)} more than once")
        if slug not in children:
            raise ContractError("children", f"{shown(slug)} is not a child of this card")
    missing = sorted(set(children) - set(named))
    if missing:
        raise ContractError("children", f"the report leaves out {', '.join(missing)}")
    return parsed
