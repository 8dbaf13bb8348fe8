"""Any text given to any parser either parses or raises ContractError, never anything else."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runners.contracts import (
    ContractError,
    InspectionAnswer,
    OperatorDecision,
    RoutingResult,
    TrustedDeployment,
    parse_builder_answer,
    parse_draft,
    parse_fixer_answer,
    parse_inspection,
    parse_operator_decision,
    parse_research,
    parse_review,
    parse_routing,
    parse_split,
    parse_synthesis,
    routing_actions,
)
from runners.contracts.markers import ALL_MARKERS, MAX_ANSWER_CHARS
from tests.contracts.helpers import (
    COMMIT,
    PARENT,
    TEST_ALLOWED,
    expect_error,
    operator_answer,
    split_decision,
)

SETTINGS = settings(max_examples=200, deadline=None)

PARSERS: dict[str, Callable[[str], Any]] = {
    "operator": lambda text: parse_operator_decision(text, TEST_ALLOWED, PARENT),
    "review": lambda text: parse_review(text, COMMIT),
    "research": parse_research,
    "split": lambda text: parse_split(text, PARENT),
    "draft": parse_draft,
    "inspection": lambda text: parse_inspection(text, TrustedDeployment(status="unknown")),
    "routing": lambda text: parse_routing(text, routing_actions(TEST_ALLOWED)),
    "builder": parse_builder_answer,
    "fixer": parse_fixer_answer,
    "fixer-no-questions": lambda text: parse_fixer_answer(text, question_allowed=False),
    "synthesis": lambda text: parse_synthesis(text, ["a-part", "b-part"]),
}

# Pieces that steer random text into the parsers' deeper branches.
FRAGMENTS = [
    *(marker.start for marker in ALL_MARKERS),
    *(marker.end for marker in ALL_MARKERS),
    "\n",
    "\r\n",
    " ",
    "---\n",
    "slug: ",
    "slug: a-part\n---\n",
    "options: ",
    "optionen: keine",
    "|",
    "```json\n",
    "```",
    "{",
    "}",
    "[",
    "]",
    '"',
    ":",
    ",",
    "null",
    "true",
    "1",
    "-1",
    '"schema_version": 1',
    '"decision": "approve"',
    f'"commit_hash": "{COMMIT}"',
    '"mode": "route_next"',
    '"mode": "implementation_status"',
    "\x00",
    "\x07",
    "\x1b",
    "\u2028",
    "\ud800",
    "NaN",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

structured_text = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=12), max_size=30).map(
    "".join
)


INNER_FRAGMENTS = [
    "options: ",
    "optionen: ",
    "|",
    " | ",
    "\n",
    "slug: a-part\n---\n",
    "Question?\n",
    "Subject line\n\n",
    "x" * 73,
    "===CHILD===\n",
    "===END-CHILD===\n",
    "\x00",
    "\x07",
    "\t",
    "\u2028",
    "```json\n",
    "```",
]


@st.composite
def marker_blocks(draw: st.DrawFn) -> str:
    """One to three well-framed blocks with random, fragment-rich content."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        marker = draw(st.sampled_from(ALL_MARKERS))
        inner = draw(
            st.lists(st.sampled_from(INNER_FRAGMENTS) | st.text(max_size=8), max_size=8).map(
                "".join
            )
        )
        parts.append(f"{marker.start}\n{inner}\n{marker.end}")
    return draw(st.sampled_from(["", "\n", "prose\n"])).join(parts)


# Near-valid answers: each contract's grammar with random text or JSON in every slot.
slot = st.text(max_size=12)
choices = st.lists(slot, max_size=6).map("|".join)
question_body = st.builds(
    lambda text, keyword, options: f"{text}\n{keyword}: {options}" if keyword else text,
    slot,
    st.sampled_from(["", "options", "optionen", "Options"]),
    choices,
)
slug_document = st.builds(lambda slug, body: f"slug: {slug}\n---\n{body}", slot, slot)
commit_and_report = st.builds(
    lambda subject, body, report: (
        f"===COMMIT-MESSAGE===\n{subject}\n\n{body}\n===END-COMMIT-MESSAGE===\n"
        f"===BUILDER-REPORT===\n{report}\n===END-BUILDER-REPORT==="
    ),
    slot,
    slot,
    slot,
)


def framed(marker_name: str, inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    marker = next(m for m in ALL_MARKERS if m.start == f"==={marker_name}===")
    return inner.map(lambda text: f"{marker.start}\n{text}\n{marker.end}")


def json_fields(names: list[str]) -> st.SearchStrategy[str]:
    """An object with exactly the contract's keys, each holding any JSON value."""
    return st.fixed_dictionaries({name: json_values for name in names}).map(json.dumps)


near_valid = st.one_of(
    framed("DRAFT-QUESTION", question_body),
    framed("FIXER-QUESTION", question_body),
    framed("DRAFT-INTENT", slug_document),
    st.lists(framed("CHILD", slug_document), max_size=11).map(
        lambda children: "===SPLIT-REPORT===\n" + "\n".join(children) + "\n===END-SPLIT-REPORT==="
    ),
    commit_and_report,
    st.builds(
        lambda report, result: (
            f"===REVIEW-REPORT===\n{report}\n===END-REVIEW-REPORT===\n"
            f"===REVIEW-RESULT===\n{result}\n===END-REVIEW-RESULT==="
        ),
        slot,
        json_fields(["schema_version", "commit_hash", "decision"]),
    ),
    framed("RESEARCH-REPORT", slot),
    framed("INSPECTION_RESULT", json_fields(list(InspectionAnswer.model_fields))),
    framed("ROUTING_RESULT", json_fields(list(RoutingResult.model_fields))),
    framed("OPERATOR-DECISION", json_fields(list(OperatorDecision.model_fields))),
)


def json_in_every_block(value: Any) -> str:
    payload = json.dumps(value)
    return "\n".join(f"{m.start}\n{payload}\n{m.end}" for m in ALL_MARKERS)


VALID_SEEDS = [
    operator_answer(split_decision()),
    "===REVIEW-REPORT===\nok\n===END-REVIEW-REPORT===\n===REVIEW-RESULT===\n"
    f'{{"schema_version":1,"commit_hash":"{COMMIT}","decision":"approve"}}\n===END-REVIEW-RESULT===',
    "===SPLIT-REPORT===\n===CHILD===\nslug: a-part\n---\nbody\n===END-CHILD===\n"
    "===END-SPLIT-REPORT===",
    "===DRAFT-QUESTION===\nWhich?\noptions: a | b\n===END-DRAFT-QUESTION===",
    "===COMMIT-MESSAGE===\nFix x\n\nbody\n===END-COMMIT-MESSAGE===\n"
    "===BUILDER-REPORT===\nreport\n===END-BUILDER-REPORT===",
]


@st.composite
def damaged_answers(draw: st.DrawFn) -> str:
    """A valid answer with a few random cuts, insertions or swaps."""
    text = draw(st.sampled_from(VALID_SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["cut", "insert", "swap"]))
        if action == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 20)) :]
        elif action == "insert":
            text = text[:at] + draw(st.sampled_from(FRAGMENTS) | st.text(max_size=5)) + text[at:]
        else:
            text = text[:at] + draw(st.characters()) + text[at + 1 :]
    return text


def accepts_or_rejects(parser: Callable[[str], Any], text: str) -> None:
    try:
        parser(text)
    except ContractError as error:
        assert error.field and error.rule
        assert str(error) == f"{error.field}: {error.rule}"
        # Messages reach chat and logs; a hostile answer must not blow them up.
        assert len(str(error)) < 1000


# Every generated text goes to every parser: generating is the costly part.
@settings(max_examples=400, deadline=None)
@given(
    text=st.text() | structured_text | damaged_answers() | marker_blocks() | near_valid | near_valid
)
def test_any_text_parses_or_raises_contract_error(text: str) -> None:
    for parser in PARSERS.values():
        accepts_or_rejects(parser, text)


@SETTINGS
@given(value=json_values)
def test_any_json_in_the_blocks_parses_or_raises_contract_error(value: Any) -> None:
    text = json_in_every_block(value)
    for parser in PARSERS.values():
        accepts_or_rejects(parser, text)


@pytest.mark.parametrize("name", PARSERS)
@pytest.mark.parametrize(
    "text",
    [
        "",
        "[" * 100_000,
        "{" + '"a":' * 50_000,
        "===OPERATOR-DECISION===\n" + "[" * 100_000 + "\n===END-OPERATOR-DECISION===",
        "===REVIEW-RESULT===\n" + "1" * 5000 + "\n===END-REVIEW-RESULT===",
        "slug:" + " " * 200_000 + "x",
        "===OPERATOR-DECISION===\n{" + '"' + "k" * 100_000 + '": 1}\n===END-OPERATOR-DECISION===',
        "===REVIEW-RESULT===\n{" + ('"' + "k" * 50_000 + '": 1,') * 2 + '"a": 1}\n'
        "===END-REVIEW-RESULT===",
    ],
    ids=[
        "empty",
        "deep-brackets",
        "deep-keys",
        "deep-json-block",
        "huge-int",
        "spaces",
        "huge-key",
        "huge-duplicate-key",
    ],
)
def test_hostile_inputs(name: str, text: str) -> None:
    accepts_or_rejects(PARSERS[name], text)


@pytest.mark.parametrize("name", PARSERS)
@pytest.mark.parametrize(
    "text",
    ["x" * (MAX_ANSWER_CHARS + 1), operator_answer(split_decision()).rjust(MAX_ANSWER_CHARS + 1)],
    ids=["too-long", "too-long-valid-block"],
)
def test_too_long_is_refused_whatever_it_holds(name: str, text: str) -> None:
    # Not "parses or raises": the size bound is what keeps every later step cheap.
    expect_error(lambda: PARSERS[name](text), "answer")


@pytest.mark.parametrize("name", PARSERS)
def test_non_text_is_rejected(name: str) -> None:
    with pytest.raises(ContractError):
        PARSERS[name](b"===RESEARCH-REPORT===")  # type: ignore[arg-type]
