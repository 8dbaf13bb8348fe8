"""Operator contract: the parser of the decision (schema in `operator_schema`, rules
that span fields or need configuration in `operator_rules`)."""

from __future__ import annotations

from runners.contracts.markers import (
    OPERATOR_DECISION,
    normalise_answer,
    reject_text_outside,
    single_block,
)
from runners.contracts.operator_rules import check_decision
from runners.contracts.operator_schema import OperatorDecision
from runners.contracts.validation import validate_json
from runners.profiles import AllowedProfiles


def parse_operator_decision(
    answer: str, allowed: AllowedProfiles, parent_slug: str
) -> OperatorDecision:
    """The validated decision, or ContractError; nothing partial ever comes back.

    The operator must answer with the block and nothing else, no prose and no code
    fence around it: this is the one answer whose every byte the wrapper acts on.
    """
    text = normalise_answer(answer)
    block = single_block(text, OPERATOR_DECISION)
    reject_text_outside(text, block, OPERATOR_DECISION)
    decision = validate_json(OperatorDecision, block.content, OPERATOR_DECISION.start)
    check_decision(decision, allowed, parent_slug)
    return decision


def format_operator_decision(decision: OperatorDecision) -> str:
    """The answer text that `parse_operator_decision` reads back as `decision`."""
    return (
        f"{OPERATOR_DECISION.start}\n{decision.model_dump_json(indent=2)}\n{OPERATOR_DECISION.end}"
    )
