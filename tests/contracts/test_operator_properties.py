"""Operator contract, property-based: valid decisions round-trip, any single bad field is caught."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runners.contracts import ContractError, format_operator_decision, parse_operator_decision
from tests.contracts.helpers import PARENT, TEST_ALLOWED, child, operator_answer
from tests.contracts.strategies import decisions

SETTINGS = settings(max_examples=200, deadline=None)


def parse(text: str) -> Any:
    return parse_operator_decision(text, TEST_ALLOWED, PARENT)


@SETTINGS
@given(decisions)
def test_valid_decision_survives_serialise_and_parse(decision: dict[str, Any]) -> None:
    parsed = parse(operator_answer(decision))
    assert parsed.model_dump(mode="json") == decision
    assert parse(format_operator_decision(parsed)) == parsed


BAD_STEP = {"model": "gpt-5-codex", "reasoning_effort": "", "iteration_limit": 10}
NOT_A_SIBLING = "x" * 61  # a valid slug longer than any the strategy draws

# (path inside the decision, invalid value, field the error must name), per decision kind.
TOP_LEVEL = (
    [(("schema_version",), value, "schema_version") for value in (2, 0, "1", True, 1.0, None)]
    + [(("decision",), value, "decision") for value in ("maybe", "", None, 1)]
    + [(("reason",), value, "reason") for value in ("", "  ", None, 3, [])]
    + [(("escalation",), value, "escalation") for value in (None, "none", {})]
    + [(("children",), value, "children") for value in (None, {}, "a")]
    + [
        (("surprise",), 1, "surprise"),
    ]
)

DIRECT = (
    [(("recommended_lane",), value, "recommended_lane") for value in ("medium", None, 1)]
    + [(("runtime",), value, "runtime") for value in ("openrouter", None, 7)]
    + [(("model",), value, "model") for value in ("other-model", None)]
    + [(("reasoning_effort",), value, "reasoning_effort") for value in ("ultra", 5)]
    + [
        (("human_action",), "Please decide.", "human_action"),
        (("children",), [child("extra-child")], "children"),
        (("escalation",), [BAD_STEP] * 3, "escalation"),
    ]
)

NEEDS_HUMAN = [(("human_action",), value, "human_action") for value in (None, "", " ", 4)] + [
    (("recommended_lane",), "light", "recommended_lane"),
    (("runtime",), "codex", "runtime"),
    (("model",), "gpt-5-codex-mini", "model"),
    (("reasoning_effort",), "medium", "reasoning_effort"),
    (("escalation",), [BAD_STEP], "escalation"),
    (("children",), [child("a-child")], "children"),
]

SPLIT = [
    (("recommended_lane",), "light", "recommended_lane"),
    (("runtime",), "codex", "runtime"),
    (("model",), "gpt-5-codex-mini", "model"),
    (("reasoning_effort",), "medium", "reasoning_effort"),
    (("human_action",), "Decide.", "human_action"),
    (("escalation",), [BAD_STEP], "escalation"),
    (("children",), [], "children"),
    (("children",), [child(f"c-{n}") for n in range(11)], "children"),
]


def child_mutations(decision: dict[str, Any], k: int) -> list[tuple[tuple[Any, ...], Any, str]]:
    me = decision["children"][k]
    at = f"children[{k}]"
    table: list[tuple[str, Any, str]] = (
        [("slug", value, "slug") for value in ("Bad_Slug", "", PARENT, 5, None)]
        + [("title", value, "title") for value in ("", " ", "two\nlines", 5, None)]
        + [("wave", value, "wave") for value in (0, -3, "1", True, 1.5, None)]
        + [
            ("blocked_by", [NOT_A_SIBLING], "blocked_by[0]"),
            ("blocked_by", [me["slug"]], "blocked_by[0]"),
            ("blocked_by", ["NOT-A-SLUG"], "blocked_by[0]"),
            ("blocked_by", "none", "blocked_by"),
        ]
        + [("write_scope", value, "write_scope") for value in ([], ["/abs"], ["a/../b"], [""], [5])]
        + [("acceptance_criteria", value, "acceptance_criteria") for value in ([], [""], [5], "x")]
        + [("intent_markdown", value, "intent_markdown") for value in ("", " \n", None, 1)]
        + [
            ("recommended_lane", "nope", "recommended_lane"),
            ("runtime", "openrouter", "runtime"),
            ("model", "nope-model", "model"),
            ("reasoning_effort", "ultra", "reasoning_effort"),
            ("escalation", [BAD_STEP] * 3, "escalation"),
            ("escalation", [{**BAD_STEP, "iteration_limit": 41}], "escalation[0].iteration_limit"),
            ("escalation", [{**BAD_STEP, "iteration_limit": 4}], "escalation[0].iteration_limit"),
            ("escalation", [{**BAD_STEP, "model": "gpt-9"}], "escalation[0].model"),
            (
                "escalation",
                [{**BAD_STEP, "reasoning_effort": None}],
                "escalation[0].reasoning_effort",
            ),
            ("surprise", True, "surprise"),
        ]
    )
    return [(("children", k, name), value, f"{at}.{field}") for name, value, field in table]


def apply(decision: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    result = copy.deepcopy(decision)
    target = result
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return result


def names(field: str, expected: str) -> bool:
    return field == expected or field.startswith((expected + ".", expected + "["))


# Each example checks the whole catalogue (about 90 answers), so fewer examples suffice.
@settings(max_examples=100, deadline=None)
@given(decisions, st.data())
def test_one_invalid_field_rejects_the_answer(
    decision: dict[str, Any], data: st.DataObject
) -> None:
    # Every mutation of the catalogue, each applied alone to this valid decision.
    cases = (
        TOP_LEVEL
        + {"direct_builder": DIRECT, "needs_human": NEEDS_HUMAN, "split": SPLIT}[
            decision["decision"]
        ]
    )
    if decision["decision"] == "split":
        k = data.draw(st.integers(0, len(decision["children"]) - 1), label="child")
        cases = cases + child_mutations(decision, k)
    for path, value, expected in cases:
        with pytest.raises(ContractError) as caught:
            parse(operator_answer(apply(decision, path, value)))
        assert names(caught.value.field, expected), f"{path}={value!r}: {caught.value}"


@settings(max_examples=50, deadline=None)
@given(
    decisions,
    st.sampled_from(
        [
            "schema_version",
            "decision",
            "reason",
            "recommended_lane",
            "runtime",
            "model",
            "reasoning_effort",
            "human_action",
            "escalation",
            "children",
        ]
    ),
)
def test_every_top_level_field_is_required(decision: dict[str, Any], missing: str) -> None:
    del decision[missing]
    with pytest.raises(ContractError) as caught:
        parse(operator_answer(decision))
    assert caught.value.field == missing
