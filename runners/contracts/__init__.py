"""Role contracts: every model answer is parsed here, strictly, before anything acts on it.

Each parser takes the raw answer text (plus the trusted context its rules need)
and returns a frozen pydantic model, or raises `ContractError` naming the field
and the rule. Nothing partial is ever returned, so the caller can apply a result
all-or-nothing.
"""

from runners.contracts.builder import BuilderAnswer, CommitMessage, parse_builder_answer
from runners.contracts.draft import DraftAnswer, DraftIntent, DraftQuestion, parse_draft
from runners.contracts.errors import ContractError
from runners.contracts.fixer import FixerAnswer, FixerQuestion, parse_fixer_answer
from runners.contracts.inspector import (
    Evidence,
    InspectionAnswer,
    InspectionResult,
    RoutingResult,
    TrustedDeployment,
    parse_inspection,
    parse_routing,
    routing_actions,
)
from runners.contracts.operator import format_operator_decision, parse_operator_decision
from runners.contracts.operator_schema import LadderStep, OperatorChild, OperatorDecision
from runners.contracts.question import Question
from runners.contracts.research import ResearchReport, parse_research
from runners.contracts.review import ReviewAnswer, ReviewVerdict, parse_review
from runners.contracts.scopes import path_in_scope, scopes_overlap
from runners.contracts.split import SplitChild, SplitProposal, parse_split
from runners.contracts.synthesis import SynthesisAnswer, parse_synthesis

__all__ = [
    "BuilderAnswer",
    "CommitMessage",
    "ContractError",
    "DraftAnswer",
    "DraftIntent",
    "DraftQuestion",
    "Evidence",
    "FixerAnswer",
    "FixerQuestion",
    "InspectionAnswer",
    "InspectionResult",
    "LadderStep",
    "OperatorChild",
    "OperatorDecision",
    "Question",
    "ResearchReport",
    "ReviewAnswer",
    "ReviewVerdict",
    "RoutingResult",
    "SplitChild",
    "SplitProposal",
    "SynthesisAnswer",
    "TrustedDeployment",
    "format_operator_decision",
    "parse_builder_answer",
    "parse_draft",
    "parse_fixer_answer",
    "parse_inspection",
    "parse_operator_decision",
    "parse_research",
    "parse_review",
    "parse_routing",
    "parse_split",
    "parse_synthesis",
    "path_in_scope",
    "routing_actions",
    "scopes_overlap",
]
