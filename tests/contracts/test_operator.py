"""Operator contract, table-driven: valid answers pass, each broken rule names its field."""

from __future__ import annotations

import json

import pytest

from runners.contracts import OperatorDecision, format_operator_decision, parse_operator_decision
from tests.contracts.helpers import (
    DELETE,
    PARENT,
    TEST_ALLOWED,
    child,
    direct_decision,
    expect_error,
    mutated,
    needs_human_decision,
    operator_answer,
    split_decision,
)

START, END = "===OPERATOR-DECISION===", "===END-OPERATOR-DECISION==="


def parse(text: str) -> OperatorDecision:
    return parse_operator_decision(text, TEST_ALLOWED, PARENT)


def heavy_direct(effort: object) -> dict:
    return {
        **direct_decision(),
        "recommended_lane": "heavy",
        "runtime": "claude",
        "model": "claude-opus-4-1",
        "reasoning_effort": effort,
        "escalation": [
            {"model": "claude-sonnet-4-5", "reasoning_effort": "", "iteration_limit": 5}
        ],
    }


def chain_split() -> dict:
    """a <- b <- c, where c overlaps a: ordered only transitively, which is enough."""
    decision = split_decision()
    decision["children"] = [
        child("part-a", write_scope=["src/shared/**"]),
        child("part-b", wave=2, blocked_by=["part-a"]),
        child("part-c", wave=3, blocked_by=["part-b"], write_scope=["src/shared/util.py"]),
    ]
    return decision


VALID = {
    "split": split_decision(),
    "direct": direct_decision(),
    "needs-human": needs_human_decision(),
    "direct-heavy-null-effort": heavy_direct(None),
    "direct-heavy-empty-effort": heavy_direct(""),
    "direct-no-ladder": mutated(direct_decision(), "escalation", []),
    "split-transitive-order": chain_split(),
    "split-later-wave-than-needed": mutated(split_decision(), "children", 1, "wave", 7),
    "split-disjoint-scopes-same-wave": mutated(
        split_decision(), "children", [child("api-layer"), child("ui-layer")]
    ),
    "split-ten-children": mutated(
        split_decision(), "children", [child(f"part-{n}") for n in range(10)]
    ),
}


@pytest.mark.parametrize("decision", VALID.values(), ids=VALID.keys())
def test_valid_decisions_parse(decision: dict) -> None:
    parsed = parse(operator_answer(decision))
    assert parsed.model_dump(mode="json") == decision
    # And what the wrapper would re-serialise reads back identically.
    assert parse(format_operator_decision(parsed)) == parsed


def test_surrounding_whitespace_is_not_text() -> None:
    parse("\n\n  " + operator_answer(direct_decision()) + "\n  \n")


S, D, H = split_decision(), direct_decision(), needs_human_decision()
GOOD = operator_answer(D)

INVALID = [
    # Marker framing.
    ("no-block", json.dumps(D), START),
    ("two-blocks", GOOD + "\n" + GOOD, START),
    ("text-before", "Here is my decision:\n" + GOOD, START),
    ("text-after", GOOD + "\nHope this helps.", END),
    ("code-fence", "```text\n" + GOOD + "\n```", START),
    ("missing-end", GOOD.replace(END, ""), END),
    ("end-before-start", f"{END}\n{json.dumps(D)}\n{START}", END),
    # JSON itself.
    ("not-json", f"{START}\n{{decision: split}}\n{END}", START),
    ("json-array", f"{START}\n[1, 2]\n{END}", START),
    ("duplicate-key", f'{START}\n{{"decision": "split", "decision": "split"}}\n{END}', "decision"),
    ("nan", f'{START}\n{{"schema_version": NaN}}\n{END}', START),
    # Top-level schema.
    ("unknown-top-field", operator_answer(mutated(D, "confidence", 0.9)), "confidence"),
    ("missing-top-field", operator_answer(mutated(D, "human_action", DELETE)), "human_action"),
    ("schema-version-2", operator_answer(mutated(D, "schema_version", 2)), "schema_version"),
    ("schema-version-true", operator_answer(mutated(D, "schema_version", True)), "schema_version"),
    ("schema-version-str", operator_answer(mutated(D, "schema_version", "1")), "schema_version"),
    ("decision-unknown", operator_answer(mutated(D, "decision", "maybe")), "decision"),
    ("reason-empty", operator_answer(mutated(D, "reason", "  ")), "reason"),
    ("reason-number", operator_answer(mutated(D, "reason", 5)), "reason"),
    # direct_builder.
    (
        "direct-lane-unknown",
        operator_answer(mutated(D, "recommended_lane", "medium")),
        "recommended_lane",
    ),
    ("direct-lane-null", operator_answer(mutated(D, "recommended_lane", None)), "recommended_lane"),
    ("direct-runtime-other", operator_answer(mutated(D, "runtime", "claude")), "runtime"),
    ("direct-runtime-null", operator_answer(mutated(D, "runtime", None)), "runtime"),
    ("direct-model-other", operator_answer(mutated(D, "model", "gpt-5-codex")), "model"),
    (
        "direct-effort-other",
        operator_answer(mutated(D, "reasoning_effort", "high")),
        "reasoning_effort",
    ),
    (
        "direct-effort-null-not-default",
        operator_answer(mutated(D, "reasoning_effort", None)),
        "reasoning_effort",
    ),
    ("heavy-effort-set", operator_answer(heavy_direct("medium")), "reasoning_effort"),
    ("direct-human-action", operator_answer(mutated(D, "human_action", "Decide")), "human_action"),
    ("direct-children", operator_answer(mutated(D, "children", [child("extra")])), "children"),
    (
        "direct-three-steps",
        operator_answer(mutated(D, "escalation", D["escalation"] * 2)),
        "escalation",
    ),
    (
        "step-model-other-runtime",
        operator_answer(mutated(D, "escalation", 0, "model", "claude-sonnet-4-5")),
        "escalation[0].model",
    ),
    (
        "step-model-invented",
        operator_answer(mutated(D, "escalation", 1, "model", "gpt-9")),
        "escalation[1].model",
    ),
    (
        "step-limit-low",
        operator_answer(mutated(D, "escalation", 0, "iteration_limit", 4)),
        "escalation[0].iteration_limit",
    ),
    (
        "step-limit-high",
        operator_answer(mutated(D, "escalation", 0, "iteration_limit", 41)),
        "escalation[0].iteration_limit",
    ),
    (
        "step-limit-str",
        operator_answer(mutated(D, "escalation", 0, "iteration_limit", "20")),
        "escalation[0].iteration_limit",
    ),
    (
        "step-limit-float",
        operator_answer(mutated(D, "escalation", 0, "iteration_limit", 20.0)),
        "escalation[0].iteration_limit",
    ),
    (
        "step-effort-null",
        operator_answer(mutated(D, "escalation", 0, "reasoning_effort", None)),
        "escalation[0].reasoning_effort",
    ),
    (
        "step-effort-shouting",
        operator_answer(mutated(D, "escalation", 0, "reasoning_effort", "HIGH")),
        "escalation[0].reasoning_effort",
    ),
    (
        "step-unknown-field",
        operator_answer(mutated(D, "escalation", 0, "runtime", "claude")),
        "escalation[0].runtime",
    ),
    (
        "step-missing-field",
        operator_answer(mutated(D, "escalation", 0, "model", DELETE)),
        "escalation[0].model",
    ),
    # split, parent level.
    (
        "split-parent-lane",
        operator_answer(mutated(S, "recommended_lane", "light")),
        "recommended_lane",
    ),
    ("split-parent-model", operator_answer(mutated(S, "model", "gpt-5-codex-mini")), "model"),
    (
        "split-parent-escalation",
        operator_answer(mutated(S, "escalation", D["escalation"][:1])),
        "escalation",
    ),
    ("split-human-action", operator_answer(mutated(S, "human_action", "Decide")), "human_action"),
    ("split-no-children", operator_answer(mutated(S, "children", [])), "children"),
    (
        "split-eleven-children",
        operator_answer(mutated(S, "children", [child(f"part-{n}") for n in range(11)])),
        "children",
    ),
    # split, each child.
    (
        "child-slug-invalid",
        operator_answer(mutated(S, "children", 0, "slug", "Bad_Slug")),
        "children[0].slug",
    ),
    (
        "child-slug-too-long",
        operator_answer(mutated(S, "children", 0, "slug", "a" * 62)),
        "children[0].slug",
    ),
    (
        "child-slug-parent",
        operator_answer(mutated(S, "children", 0, "slug", PARENT)),
        "children[0].slug",
    ),
    (
        "child-slug-duplicate",
        operator_answer(mutated(S, "children", 1, "slug", "api-layer")),
        "children[1].slug",
    ),
    (
        "child-title-duplicate",
        operator_answer(mutated(S, "children", 1, "title", "  TITLE of api-layer")),
        "children[1].title",
    ),
    (
        "child-title-multiline",
        operator_answer(mutated(S, "children", 0, "title", "Two\nlines")),
        "children[0].title",
    ),
    (
        "child-title-empty",
        operator_answer(mutated(S, "children", 0, "title", "")),
        "children[0].title",
    ),
    ("child-wave-zero", operator_answer(mutated(S, "children", 0, "wave", 0)), "children[0].wave"),
    (
        "child-wave-negative",
        operator_answer(mutated(S, "children", 0, "wave", -1)),
        "children[0].wave",
    ),
    (
        "child-wave-true",
        operator_answer(mutated(S, "children", 0, "wave", True)),
        "children[0].wave",
    ),
    ("child-wave-str", operator_answer(mutated(S, "children", 0, "wave", "1")), "children[0].wave"),
    (
        "child-wave-float",
        operator_answer(mutated(S, "children", 0, "wave", 1.0)),
        "children[0].wave",
    ),
    (
        "blocked-by-stranger",
        operator_answer(mutated(S, "children", 1, "blocked_by", ["other-card"])),
        "children[1].blocked_by[0]",
    ),
    (
        "blocked-by-parent",
        operator_answer(mutated(S, "children", 1, "blocked_by", [PARENT])),
        "children[1].blocked_by[0]",
    ),
    (
        "blocked-by-self",
        operator_answer(mutated(S, "children", 0, "blocked_by", ["api-layer"])),
        "children[0].blocked_by[0]",
    ),
    (
        "blocked-by-twice",
        operator_answer(mutated(S, "children", 1, "blocked_by", ["api-layer", "api-layer"])),
        "children[1].blocked_by[1]",
    ),
    (
        "blocked-by-not-slug",
        operator_answer(mutated(S, "children", 1, "blocked_by", ["API"])),
        "children[1].blocked_by[0]",
    ),
    (
        "cycle",
        operator_answer(
            mutated(mutated(S, "children", 0, "blocked_by", ["ui-layer"]), "children", 0, "wave", 2)
        ),
        "children[0].blocked_by",
    ),
    (
        "wave-before-dependency",
        operator_answer(
            mutated(S, "children", 1, "wave", 1)
            | {"children": [child("api-layer", wave=3), S["children"][1]]}
        ),
        "children[1].wave",
    ),
    (
        "write-scope-empty",
        operator_answer(mutated(S, "children", 0, "write_scope", [])),
        "children[0].write_scope",
    ),
    (
        "write-scope-absolute",
        operator_answer(mutated(S, "children", 0, "write_scope", ["/etc/passwd"])),
        "children[0].write_scope[0]",
    ),
    (
        "write-scope-parent-dir",
        operator_answer(mutated(S, "children", 0, "write_scope", ["src/../../x"])),
        "children[0].write_scope[0]",
    ),
    (
        "write-scope-home",
        operator_answer(mutated(S, "children", 0, "write_scope", ["src/a", "~/x"])),
        "children[0].write_scope[1]",
    ),
    (
        "write-scope-overlap-unordered",
        operator_answer(mutated(S, "children", 1, "blocked_by", [])),
        "children[1].write_scope",
    ),
    (
        "write-scope-overlap-via-glob",
        operator_answer(
            {
                **S,
                "children": [
                    child("api-layer"),
                    child("ui-layer", write_scope=["src/*/models.py"]),
                ],
            }
        ),
        "children[1].write_scope",
    ),
    (
        "criteria-empty",
        operator_answer(mutated(S, "children", 0, "acceptance_criteria", [])),
        "children[0].acceptance_criteria",
    ),
    (
        "criteria-blank",
        operator_answer(mutated(S, "children", 0, "acceptance_criteria", [" "])),
        "children[0].acceptance_criteria[0]",
    ),
    (
        "intent-blank",
        operator_answer(mutated(S, "children", 0, "intent_markdown", "\n")),
        "children[0].intent_markdown",
    ),
    (
        "child-lane-unknown",
        operator_answer(mutated(S, "children", 0, "recommended_lane", "schwer")),
        "children[0].recommended_lane",
    ),
    (
        "child-runtime-other",
        operator_answer(mutated(S, "children", 1, "runtime", "codex")),
        "children[1].runtime",
    ),
    (
        "child-model-other",
        operator_answer(mutated(S, "children", 1, "model", "claude-sonnet-4-5")),
        "children[1].model",
    ),
    (
        "child-step-model",
        operator_answer(mutated(S, "children", 0, "escalation", 0, "model", "claude-opus-4-1")),
        "children[0].escalation[0].model",
    ),
    (
        "child-three-steps",
        operator_answer(mutated(S, "children", 0, "escalation", D["escalation"] * 2)),
        "children[0].escalation",
    ),
    (
        "child-unknown-field",
        operator_answer(mutated(S, "children", 0, "priority", 1)),
        "children[0].priority",
    ),
    (
        "child-missing-field",
        operator_answer(mutated(S, "children", 0, "escalation", DELETE)),
        "children[0].escalation",
    ),
    # needs_human.
    ("human-action-null", operator_answer(mutated(H, "human_action", None)), "human_action"),
    ("human-action-blank", operator_answer(mutated(H, "human_action", " ")), "human_action"),
    ("human-runtime", operator_answer(mutated(H, "runtime", "codex")), "runtime"),
    (
        "human-escalation",
        operator_answer(mutated(H, "escalation", D["escalation"][:1])),
        "escalation",
    ),
    ("human-children", operator_answer(mutated(H, "children", [child("a-child")])), "children"),
]


@pytest.mark.parametrize(
    ("answer", "field"), [case[1:] for case in INVALID], ids=[case[0] for case in INVALID]
)
def test_invalid_decisions_name_the_field(answer: str, field: str) -> None:
    expect_error(lambda: parse(answer), field)


def test_enough_invalid_cases() -> None:
    assert len(INVALID) >= 25
    assert len({case[0] for case in INVALID}) == len(INVALID)


def test_cycle_message_shows_the_cycle() -> None:
    decision = mutated(
        mutated(S, "children", 0, "blocked_by", ["ui-layer"]), "children", 0, "wave", 2
    )
    error = expect_error(lambda: parse(operator_answer(decision)), "children[0].blocked_by")
    assert "api-layer -> ui-layer -> api-layer" in error.rule


def test_other_lanes_or_pools_change_what_is_valid() -> None:
    # The same answer is judged by the allow-list it is given, nothing else.
    from runners.profiles import AllowedProfiles

    only_heavy = AllowedProfiles(lanes={"heavy": TEST_ALLOWED.lanes["heavy"]})
    expect_error(
        lambda: parse_operator_decision(operator_answer(D), only_heavy, PARENT), "recommended_lane"
    )
    no_pool = AllowedProfiles(lanes=TEST_ALLOWED.lanes)
    expect_error(
        lambda: parse_operator_decision(operator_answer(D), no_pool, PARENT), "escalation[0].model"
    )
