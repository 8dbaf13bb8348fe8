"""The synthesis contract: a report, and a result naming exactly the split's children."""

from __future__ import annotations

import json

import pytest

from runners.contracts import parse_synthesis
from tests.contracts.helpers import expect_error

CHILDREN = ["part-a", "part-b"]
REPORT = "===SYNTHESIS-REPORT===\n# Synthesis\n\nBoth parts.\n===END-SYNTHESIS-REPORT==="


def result(**changes: object) -> str:
    value = {"schema_version": 1, "children": CHILDREN, "gaps": []} | changes
    return f"===SYNTHESIS-RESULT===\n{json.dumps(value)}\n===END-SYNTHESIS-RESULT==="


def test_a_synthesis_with_its_gaps() -> None:
    gaps = ["No migration.", "The two parts disagree on the date format."]
    parsed = parse_synthesis(f"Looked at both.\n{REPORT}\n{result(gaps=gaps)}", CHILDREN)
    assert parsed.report == "# Synthesis\n\nBoth parts."
    assert parsed.children == ("part-a", "part-b") and parsed.gaps == tuple(gaps)


def test_children_in_any_order_and_no_gaps() -> None:
    parsed = parse_synthesis(REPORT + result(children=["part-b", "part-a"]), CHILDREN)
    assert parsed.gaps == ()


@pytest.mark.parametrize(
    ("answer", "field", "rule"),
    [
        (REPORT + result(children=["part-a"]), "children", "leaves out part-b"),
        (REPORT + result(children=[*CHILDREN, "part-c"]), "children", "not a child"),
        (REPORT + result(children=[*CHILDREN, "part-a"]), "children", "more than once"),
        (REPORT + result(children=["Part A"]), "children[0]", "is not a slug"),
        (REPORT + result(gaps=["two\nlines"]), "gaps[0]", "single line"),
        (REPORT + result(gaps=["x"] * 21), "gaps", "at most 20"),
        (REPORT + result(gaps=["x" * 501]), "gaps[0]", "at most 500"),
        (REPORT + result(report="mine"), "report", "unknown field"),
        (REPORT + result(extra=1), "extra", "unknown field"),
        (REPORT + result(schema_version=2), "schema_version", "must be 1"),
        (REPORT, "===SYNTHESIS-RESULT===", "missing"),
        (result(), "===SYNTHESIS-REPORT===", "missing"),
        (
            "===SYNTHESIS-REPORT===\n \n===END-SYNTHESIS-REPORT===" + result(),
            "===SYNTHESIS-REPORT===",
            "empty",
        ),
        (REPORT + result() + result(), "===SYNTHESIS-RESULT===", "2 times"),
    ],
)
def test_a_broken_synthesis_is_rejected_whole(answer: str, field: str, rule: str) -> None:
    error = expect_error(lambda: parse_synthesis(answer, CHILDREN), field)
    assert rule in error.rule, error
