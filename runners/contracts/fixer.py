"""Fixer contract: a repair commit like a builder's, or one question for the owner.

The fixer runs in a fresh session on a failed or rejected card. When the needed
decision cannot be derived from what it was given it may ask instead, but only
while question rounds are left (the bot allows two); its commit then goes
through review like any other.
"""

from __future__ import annotations

from runners.contracts.builder import BuilderAnswer, builder_blocks
from runners.contracts.errors import ContractError
from runners.contracts.markers import (
    BUILDER_REPORT,
    COMMIT_MESSAGE,
    FIXER_QUESTION,
    has_block,
    normalise_answer,
    single_block,
)
from runners.contracts.question import Question, parse_question


class FixerQuestion(Question):
    """Posted to the owner; the answer is added to the fixer's question history."""


FixerAnswer = BuilderAnswer | FixerQuestion


def parse_fixer_answer(answer: str, *, question_allowed: bool = True) -> FixerAnswer:
    text = normalise_answer(answer)
    if not has_block(text, FIXER_QUESTION):
        return builder_blocks(text)
    for other in (COMMIT_MESSAGE, BUILDER_REPORT):
        if has_block(text, other):
            raise ContractError(
                FIXER_QUESTION.start, f"a question answer must not also hold {other.start}"
            )
    if not question_allowed:
        raise ContractError(FIXER_QUESTION.start, "no question rounds are left; commit a fix")
    block = single_block(text, FIXER_QUESTION)
    return parse_question(block.content, FIXER_QUESTION.start, FixerQuestion)
