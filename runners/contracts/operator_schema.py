"""Operator contract, the schema: the schema_version 1 decision, field by field.

The model checks everything a single field can get wrong; the rules that need
configuration or several fields at once live in `operator_rules`, and the parser
that puts both together in `operator`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field

from runners.contracts.scopes import write_scope_problem
from runners.contracts.validation import STRICT, NonBlank, SchemaVersion, SingleLine, Slug, shown
from runners.profiles import (
    ITERATION_LIMIT_MAX,
    ITERATION_LIMIT_MIN,
    MAX_ESCALATION_STEPS,
    is_valid_model,
    is_valid_reasoning_effort,
)

MAX_CHILDREN = 10
MAX_TITLE_CHARS = 200
# Bounds keep the pairwise overlap check small whatever the model sends.
MAX_WRITE_SCOPES = 50
MAX_CRITERIA = 50


def _model_name(value: str) -> str:
    if not is_valid_model(value):
        raise ValueError(f"{shown(value)} is not a model name")
    return value


def _effort(value: str) -> str:
    if not is_valid_reasoning_effort(value):
        raise ValueError(f"{shown(value)} is not a reasoning effort (lowercase word or '')")
    return value


def _scope(value: str) -> str:
    problem = write_scope_problem(value)
    if problem is not None:
        raise ValueError(f"{shown(value)}: {problem}")
    return value


def _title(value: str) -> str:
    if len(value) > MAX_TITLE_CHARS:
        raise ValueError(f"longer than {MAX_TITLE_CHARS} characters")
    return value


ModelName = Annotated[str, AfterValidator(_model_name)]
Effort = Annotated[str, AfterValidator(_effort)]
WriteScope = Annotated[str, AfterValidator(_scope)]
Title = Annotated[SingleLine, AfterValidator(_title)]


class LadderStep(BaseModel):
    """One automatic retry after `limit_reached`: runtime and lane never change."""

    model_config = STRICT

    model: ModelName
    reasoning_effort: Effort
    iteration_limit: Annotated[int, Field(ge=ITERATION_LIMIT_MIN, le=ITERATION_LIMIT_MAX)]


Ladder = Annotated[tuple[LadderStep, ...], Field(max_length=MAX_ESCALATION_STEPS)]


class OperatorChild(BaseModel):
    model_config = STRICT

    slug: Slug
    title: Title
    wave: Annotated[int, Field(ge=1)]
    blocked_by: tuple[Slug, ...]
    recommended_lane: str
    runtime: str
    model: str
    # null is how the prompt shows a lane whose configured effort is the default ("").
    reasoning_effort: str | None
    write_scope: Annotated[tuple[WriteScope, ...], Field(min_length=1, max_length=MAX_WRITE_SCOPES)]
    acceptance_criteria: Annotated[
        tuple[NonBlank, ...], Field(min_length=1, max_length=MAX_CRITERIA)
    ]
    intent_markdown: NonBlank
    escalation: Ladder


class OperatorDecision(BaseModel):
    model_config = STRICT

    schema_version: SchemaVersion
    decision: Literal["direct_builder", "split", "needs_human"]
    reason: NonBlank
    recommended_lane: str | None
    runtime: str | None
    model: str | None
    reasoning_effort: str | None
    human_action: str | None
    escalation: Ladder
    children: Annotated[tuple[OperatorChild, ...], Field(max_length=MAX_CHILDREN)]
