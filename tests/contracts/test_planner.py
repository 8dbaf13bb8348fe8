"""Planner contracts (split and draft modes), table-driven."""

from __future__ import annotations

import pytest

from runners.contracts import DraftIntent, DraftQuestion, parse_draft, parse_split
from tests.contracts.helpers import PARENT, expect_error


def child_block(slug: str, body: str = "# Intent: x\n\nGoal.", dashes: str = "---") -> str:
    return f"===CHILD===\nslug: {slug}\n{dashes}\n{body}\n===END-CHILD===\n"


def report(*children: str) -> str:
    return "===SPLIT-REPORT===\n" + "".join(children) + "===END-SPLIT-REPORT==="


def test_split_children_in_order() -> None:
    answer = "Here you go.\n" + report(
        child_block("first-part"), child_block("second-part", "Body 2", "-----")
    )
    parsed = parse_split(answer, PARENT)
    assert [(c.slug, c.body) for c in parsed.children] == [
        ("first-part", "# Intent: x\n\nGoal."),
        ("second-part", "Body 2"),
    ]


def test_split_ten_children() -> None:
    parsed = parse_split(report(*(child_block(f"part-{n}") for n in range(10))), PARENT)
    assert len(parsed.children) == 10


INVALID_SPLIT = [
    ("no-report", child_block("a-part"), "===SPLIT-REPORT==="),
    (
        "report-without-end",
        "===SPLIT-REPORT===\n" + child_block("a-part"),
        "===END-SPLIT-REPORT===",
    ),
    ("two-reports", report(child_block("a-part")) * 2, "===SPLIT-REPORT==="),
    ("no-children", report("Nothing to split."), "children"),
    ("eleven-children", report(*(child_block(f"part-{n}") for n in range(11))), "children"),
    ("child-without-end", report("===CHILD===\nslug: a-part\n---\nbody\n"), "children[0]"),
    (
        "nested-child",
        report("===CHILD===\nslug: a-part\n---\n" + child_block("b-part")),
        "children[0]",
    ),
    ("stray-child-end", report("===END-CHILD===\n" + child_block("a-part")), "===END-CHILD==="),
    ("no-header", report("===CHILD===\n# Intent\nbody\n===END-CHILD===\n"), "children[0].slug"),
    ("no-dashes", report("===CHILD===\nslug: a-part\nbody\n===END-CHILD===\n"), "children[0].slug"),
    ("bad-slug", report(child_block("A_Part")), "children[0].slug"),
    ("empty-body", report(child_block("a-part", "  ")), "children[0].body"),
    ("parent-slug", report(child_block("a-part"), child_block(PARENT)), "children[1].slug"),
    ("duplicate-slug", report(child_block("a-part"), child_block("a-part")), "children[1].slug"),
]


@pytest.mark.parametrize(
    ("answer", "field"), [c[1:] for c in INVALID_SPLIT], ids=[c[0] for c in INVALID_SPLIT]
)
def test_invalid_split(answer: str, field: str) -> None:
    expect_error(lambda: parse_split(answer, PARENT), field)


def question(body: str) -> str:
    return f"===DRAFT-QUESTION===\n{body}\n===END-DRAFT-QUESTION==="


INTENT = (
    "===DRAFT-INTENT===\nslug: csv-export\n---\n# Intent: CSV export\n\nGoal.\n"
    "===END-DRAFT-INTENT==="
)

VALID_DRAFT = [
    (
        "options",
        question("Which format?\noptions: CSV | JSON |  XML "),
        DraftQuestion(text="Which format?", options=("CSV", "JSON", "XML")),
    ),
    (
        "german-options",
        question("Welches Format?\nOptionen: CSV | JSON"),
        DraftQuestion(text="Welches Format?", options=("CSV", "JSON")),
    ),
    (
        "options-none",
        question("Anything else?\noptions: none"),
        DraftQuestion(text="Anything else?", options=()),
    ),
    (
        "options-keine",
        question("Noch etwas?\noptionen: keine"),
        DraftQuestion(text="Noch etwas?", options=()),
    ),
    (
        "no-options-line",
        question("Line one.\n\nLine two?"),
        DraftQuestion(text="Line one.\n\nLine two?", options=()),
    ),
    (
        "four-options",
        question("Pick\noptions: a|b|c|d"),
        DraftQuestion(text="Pick", options=("a", "b", "c", "d")),
    ),
    (
        "intent",
        "Thanks.\n" + INTENT,
        DraftIntent(slug="csv-export", body="# Intent: CSV export\n\nGoal."),
    ),
]


@pytest.mark.parametrize(
    ("answer", "expected"), [c[1:] for c in VALID_DRAFT], ids=[c[0] for c in VALID_DRAFT]
)
def test_valid_draft(answer: str, expected: object) -> None:
    assert parse_draft(answer) == expected


INVALID_DRAFT = [
    ("both", question("Which?") + INTENT, "===DRAFT-QUESTION==="),
    ("neither", "I think we are done.", "===DRAFT-QUESTION==="),
    ("question-empty", question("\noptions: a | b"), "===DRAFT-QUESTION===.text"),
    ("five-options", question("Pick\noptions: a|b|c|d|e"), "===DRAFT-QUESTION===.options"),
    ("empty-choice", question("Pick\noptions: a||b"), "===DRAFT-QUESTION===.options[1]"),
    ("duplicate-choice", question("Pick\noptions: Yes | yes"), "===DRAFT-QUESTION===.options[1]"),
    ("long-choice", question("Pick\noptions: " + "x" * 101), "===DRAFT-QUESTION===.options[0]"),
    (
        "options-not-last",
        question("Pick\noptions: a | b\nMore text"),
        "===DRAFT-QUESTION===.options",
    ),
    ("two-options-lines", question("Pick\noptions: a\noptions: b"), "===DRAFT-QUESTION===.options"),
    ("two-questions", question("One?") + question("Two?"), "===DRAFT-QUESTION==="),
    ("question-no-end", "===DRAFT-QUESTION===\nWhich?", "===END-DRAFT-QUESTION==="),
    ("intent-bad-slug", INTENT.replace("csv-export", "CSV export"), "===DRAFT-INTENT===.slug"),
    ("intent-no-dashes", INTENT.replace("\n---\n", "\n"), "===DRAFT-INTENT===.slug"),
    (
        "intent-no-slug-line",
        "===DRAFT-INTENT===\n# Intent\n===END-DRAFT-INTENT===",
        "===DRAFT-INTENT===.slug",
    ),
    (
        "intent-empty-body",
        "===DRAFT-INTENT===\nslug: x\n---\n\n===END-DRAFT-INTENT===",
        "===DRAFT-INTENT===.body",
    ),
    (
        "control-char-choice",
        question("Pick\noptions: a\x07 | b"),
        "===DRAFT-QUESTION===.options[0]",
    ),
    ("nul-anywhere", INTENT.replace("Goal.", "Goal.\x00"), "answer"),
    ("intent-no-end", INTENT.replace("===END-DRAFT-INTENT===", ""), "===END-DRAFT-INTENT==="),
]


@pytest.mark.parametrize(
    ("answer", "field"), [c[1:] for c in INVALID_DRAFT], ids=[c[0] for c in INVALID_DRAFT]
)
def test_invalid_draft(answer: str, field: str) -> None:
    expect_error(lambda: parse_draft(answer), field)
