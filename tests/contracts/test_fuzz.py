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
    routing_actions,
)
from runners.contracts.markers import ALL_MARKERS
from tests.contracts.helpers import COMMIT, PARENT, TEST_ALLOWED, operator_answer, split_decision

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


@pytest.mark.parametrize("name", PARSERS)
@SETTINGS
@given(text=st.text() | structured_text | damaged_answers())
def test_any_text_parses_or_raises_contract_error(name: str, text: str) -> None:
    accepts_or_rejects(PARSERS[name], text)


@pytest.mark.parametrize("name", PARSERS)
@SETTINGS
@given(value=json_values)
def test_any_json_in_the_blocks_parses_or_raises_contract_error(name: str, value: Any) -> None:
    accepts_or_rejects(PARSERS[name], json_in_every_block(value))


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
        "x" * 1_000_001,
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
        "too-long",
        "huge-key",
        "huge-duplicate-key",
    ],
)
def test_hostile_inputs(name: str, text: str) -> None:
    accepts_or_rejects(PARSERS[name], text)


@pytest.mark.parametrize("name", PARSERS)
def test_non_text_is_rejected(name: str) -> None:
    with pytest.raises(ContractError):
        PARSERS[name](b"===RESEARCH-REPORT===")  # type: ignore[arg-type]
