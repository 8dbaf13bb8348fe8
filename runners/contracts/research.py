"""Researcher contract: one non-empty report, written by the wrapper to docs/research/."""

from __future__ import annotations

from pydantic import BaseModel

from runners.contracts.errors import ContractError
from runners.contracts.markers import RESEARCH_REPORT, normalise_answer, single_block
from runners.contracts.validation import STRICT, NonBlank, build


class ResearchReport(BaseModel):
    model_config = STRICT

    report: NonBlank


def parse_research(answer: str) -> ResearchReport:
    text = normalise_answer(answer)
    content = single_block(text, RESEARCH_REPORT).content.strip()
    if not content:
        raise ContractError(RESEARCH_REPORT.start, "the research report is empty")
    return build(ResearchReport, RESEARCH_REPORT.start, report=content)
