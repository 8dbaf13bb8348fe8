"""Inspector contracts: read-only status checks of a card, in two modes.

`implementation_status` reports whether the card's intent is in the repository
and deployed; `route_next` recommends where the card should go next. Deployment
is the wrapper's knowledge, not the model's: the wrapper's trusted evidence
always replaces whatever the model claimed, and a disagreement is flagged so the
owner sees it.

Prose around the block is tolerated (a model narrating a denied tool call
before an otherwise perfect block is not worth a failed run), and so is one
code fence around the JSON inside it, because models mirror the fenced example
in their prompt. Two blocks are a real ambiguity and are rejected.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel

from runners.contracts.errors import ContractError
from runners.contracts.markers import (
    INSPECTION_RESULT,
    ROUTING_RESULT,
    Marker,
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
from runners.profiles import AllowedProfiles

RepositoryStatus = Literal["present", "partial", "missing", "unverifiable"]
DeploymentStatus = Literal["deployed", "not_deployed", "unknown"]

_FENCE_RE = re.compile(r"```[a-zA-Z]*[ \t]*\n(.*?)\n?```", re.DOTALL)
_FULL_COMMIT_RE = re.compile(r"[0-9a-f]{40}")


def _full_commit(value: str) -> str:
    if _FULL_COMMIT_RE.fullmatch(value) is None:
        raise ValueError("must be a full 40-character lowercase commit hash or null")
    return value


class Evidence(BaseModel):
    model_config = STRICT

    source: NonBlank
    finding: NonBlank


class TrustedDeployment(BaseModel):
    """What the wrapper itself knows about the deployment; never comes from a model."""

    model_config = STRICT

    status: DeploymentStatus
    evidence: tuple[Evidence, ...] = ()
    source: NonBlank = "wrapper"

    def as_evidence(self) -> tuple[Evidence, ...]:
        if self.evidence:
            return self.evidence
        return (Evidence(source=self.source, finding=f"wrapper status: {self.status}"),)


class InspectionAnswer(BaseModel):
    """The JSON inside ===INSPECTION_RESULT===; these ten fields and no others."""

    model_config = STRICT

    schema_version: SchemaVersion
    mode: Literal["implementation_status"]
    repository_status: RepositoryStatus
    deployment_status: DeploymentStatus
    checked_revision: Annotated[str, AfterValidator(_full_commit)] | None
    repository_evidence: tuple[Evidence, ...]
    deployment_evidence: tuple[Evidence, ...]
    summary: NonBlank
    question: NonBlank | None
    required_action: NonBlank | None


class InspectionResult(InspectionAnswer):
    """The answer with `deployment_status` and `deployment_evidence` from the wrapper."""

    model_deployment_status: DeploymentStatus | None
    deployment_status_discrepancy: bool


class RoutingResult(BaseModel):
    """The JSON inside ===ROUTING_RESULT===; these eight fields and no others."""

    model_config = STRICT

    schema_version: SchemaVersion
    mode: Literal["route_next"]
    outcome: Literal["recommendation", "needs_input", "no_action"]
    recommended_action: str | None
    basis: tuple[Evidence, ...]
    summary: NonBlank
    question: NonBlank | None
    required_action: NonBlank | None


def routing_actions(allowed: AllowedProfiles) -> tuple[str, ...]:
    """The phases an inspector may recommend; building is offered once per configured lane."""
    lanes = tuple(f"building_{lane}" for lane in sorted(allowed.lanes))
    return ("planned", *lanes, "reviewing", "archived", "research_requested", "research_running")


def _json_block(text: str, marker: Marker) -> str:
    content = single_block(text, marker).content.strip()
    fenced = _FENCE_RE.fullmatch(content)
    return fenced.group(1).strip() if fenced else content


def parse_inspection(answer: str, trusted: TrustedDeployment) -> InspectionResult:
    text = normalise_answer(answer)
    found = validate_json(
        InspectionAnswer, _json_block(text, INSPECTION_RESULT), INSPECTION_RESULT.start
    )
    if not found.repository_evidence and found.repository_status != "unverifiable":
        raise ContractError("repository_evidence", "needs evidence unless status is unverifiable")
    if not found.deployment_evidence and found.deployment_status != "unknown":
        raise ContractError("deployment_evidence", "needs evidence unless status is unknown")
    disagrees = found.deployment_status != trusted.status
    # getattr: the answer's fields that the inspection keeps, copied by their names
    kept = {name: getattr(found, name) for name in InspectionAnswer.model_fields}
    kept.update(deployment_status=trusted.status, deployment_evidence=trusted.as_evidence())
    return build(
        InspectionResult,
        INSPECTION_RESULT.start,
        **kept,
        model_deployment_status=found.deployment_status if disagrees else None,
        deployment_status_discrepancy=disagrees,
    )


def parse_routing(answer: str, allowed_actions: Collection[str]) -> RoutingResult:
    text = normalise_answer(answer)
    found = validate_json(RoutingResult, _json_block(text, ROUTING_RESULT), ROUTING_RESULT.start)
    if not found.basis and found.outcome != "needs_input":
        raise ContractError("basis", "needs evidence unless the outcome is needs_input")
    if found.outcome == "recommendation":
        if found.recommended_action not in allowed_actions:
            choices = ", ".join(allowed_actions)
            raise ContractError(
                "recommended_action", f"{shown(found.recommended_action)} is not one of: {choices}"
            )
        _require_null(found, ("question", "required_action"), found.outcome)
    elif found.outcome == "needs_input":
        _require_null(found, ("recommended_action",), found.outcome)
        for name in ("question", "required_action"):
            # getattr: the two fields the loop names, which must be set
            if getattr(found, name) is None:
                raise ContractError(name, "needs_input must ask a question and name the action")
    else:
        _require_null(found, ("recommended_action", "question", "required_action"), found.outcome)
    return found


def _require_null(found: RoutingResult, names: tuple[str, ...], outcome: str) -> None:
    for name in names:
        # getattr: the fields the caller names, which must be null for this outcome
        if getattr(found, name) is not None:
            raise ContractError(name, f"must be null for {outcome}")
