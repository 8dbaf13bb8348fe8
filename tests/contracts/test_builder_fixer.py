"""Builder and fixer contracts, table-driven."""

from __future__ import annotations

import pytest

from runners.contracts import BuilderAnswer, FixerQuestion, parse_builder_answer, parse_fixer_answer
from tests.contracts.helpers import expect_error


def message(text: str) -> str:
    return f"===COMMIT-MESSAGE===\n{text}\n===END-COMMIT-MESSAGE===\n"


def report(text: str = "Changed x; ran pytest: 12 passed.") -> str:
    return f"===BUILDER-REPORT===\n{text}\n===END-BUILDER-REPORT===\n"


def test_subject_only() -> None:
    parsed = parse_builder_answer("All done.\n" + message("Add CSV export") + report())
    assert parsed.commit_message.subject == "Add CSV export"
    assert parsed.commit_message.body == ""
    assert parsed.commit_message.text() == "Add CSV export\n"
    assert parsed.report == "Changed x; ran pytest: 12 passed."


def test_subject_and_body_in_either_block_order() -> None:
    parsed = parse_builder_answer(report() + message("Add CSV export\n\nWhy:\n- users asked  "))
    assert parsed.commit_message.body == "Why:\n- users asked"
    assert parsed.commit_message.text() == "Add CSV export\n\nWhy:\n- users asked\n"


def test_subject_of_exactly_72_characters() -> None:
    assert len(parse_builder_answer(message("x" * 72) + report()).commit_message.subject) == 72


INVALID_BUILDER = [
    ("no-message", report(), "===COMMIT-MESSAGE==="),
    ("no-report", message("Add x"), "===BUILDER-REPORT==="),
    ("empty-report", message("Add x") + report(" "), "===BUILDER-REPORT==="),
    ("two-messages", message("Add x") + message("Add y") + report(), "===COMMIT-MESSAGE==="),
    ("message-without-end", "===COMMIT-MESSAGE===\nAdd x\n" + report(), "===END-COMMIT-MESSAGE==="),
    (
        "nested",
        "===COMMIT-MESSAGE===\nAdd x\n" + report() + "===END-COMMIT-MESSAGE===",
        "===BUILDER-REPORT===",
    ),
    ("subject-73", message("x" * 73) + report(), "===COMMIT-MESSAGE===.subject"),
    ("subject-empty", message("\n\n") + report(), "===COMMIT-MESSAGE===.subject"),
    ("subject-control", message("Add\x07 x") + report(), "===COMMIT-MESSAGE===.subject"),
    ("no-blank-line", message("Add x\nbody right away") + report(), "===COMMIT-MESSAGE===.body"),
    ("body-control", message("Add x\n\nbell\x07") + report(), "===COMMIT-MESSAGE===.body"),
]


@pytest.mark.parametrize(
    ("answer", "field"), [c[1:] for c in INVALID_BUILDER], ids=[c[0] for c in INVALID_BUILDER]
)
def test_invalid_builder(answer: str, field: str) -> None:
    expect_error(lambda: parse_builder_answer(answer), field)


def question(text: str) -> str:
    return f"===FIXER-QUESTION===\n{text}\n===END-FIXER-QUESTION==="


def test_fixer_commit() -> None:
    parsed = parse_fixer_answer(message("Fix rounding") + report())
    assert isinstance(parsed, BuilderAnswer)
    assert parsed.commit_message.subject == "Fix rounding"


def test_fixer_question() -> None:
    parsed = parse_fixer_answer(question("Zero or negative?\noptions: zero | negative"))
    assert parsed == FixerQuestion(text="Zero or negative?", options=("zero", "negative"))


INVALID_FIXER = [
    ("question-and-commit", question("Why?") + message("Fix x") + report(), "===FIXER-QUESTION==="),
    ("question-and-report", question("Why?") + report(), "===FIXER-QUESTION==="),
    ("two-questions", question("Why?") + question("How?"), "===FIXER-QUESTION==="),
    ("empty-question", question(""), "===FIXER-QUESTION===.text"),
    ("five-options", question("Pick\noptions: a|b|c|d|e"), "===FIXER-QUESTION===.options"),
    ("neither", "I could not fix it.", "===COMMIT-MESSAGE==="),
    ("commit-without-report", message("Fix x"), "===BUILDER-REPORT==="),
]


@pytest.mark.parametrize(
    ("answer", "field"), [c[1:] for c in INVALID_FIXER], ids=[c[0] for c in INVALID_FIXER]
)
def test_invalid_fixer(answer: str, field: str) -> None:
    expect_error(lambda: parse_fixer_answer(answer), field)


def test_fixer_question_after_the_last_round_is_rejected() -> None:
    expect_error(
        lambda: parse_fixer_answer(question("Why?"), question_allowed=False), "===FIXER-QUESTION==="
    )
