"""Every scripted answer of the demo passes the contract its role is held to."""

from __future__ import annotations

import json
from pathlib import Path

from chatbot.app import demo
from runners.contracts import (
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
from runners.scripted import agent

ROOT = Path(__file__).resolve().parents[2]
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_each_demo_answer_is_valid() -> None:
    allowed = demo.config().allowed_profiles()
    turns = json.loads((ROOT / "chatbot" / "app" / "demo" / "scenario.json").read_text())["turns"]
    parsers = {
        "Planner: Who is this for, and how will you know it works?": lambda a: parse_draft(a),
        "DRAFT-QUESTION": lambda a: parse_draft(a),
        "SPLIT-REPORT": lambda a: parse_split(a, "some-card"),
        "OPERATOR-DECISION": lambda a: parse_operator_decision(a, allowed, "some-card"),
        "FIXER-QUESTION": lambda a: parse_fixer_answer(a),
        "COMMIT-MESSAGE": lambda a: parse_builder_answer(a),
        "REVIEW-RESULT": lambda a: parse_review(a.replace("{{HEAD}}", COMMIT), COMMIT),
        "RESEARCH-REPORT": lambda a: parse_research(a),
        "INSPECTION_RESULT": lambda a: parse_inspection(a, TrustedDeployment(status="unknown")),
        "ROUTING_RESULT": lambda a: parse_routing(a, routing_actions(allowed)),
        # The demo's split makes these two children; the synthesis sums them up.
        "SYNTHESIS-RESULT": lambda a: parse_synthesis(a, ["demo-part-one", "demo-part-two"]),
    }
    # A turn matched by several strings (the slow card's builder) is held to the first's.
    first = [t["match"] if isinstance(t["match"], str) else t["match"][0] for t in turns]
    assert set(first) == set(parsers)
    # As a model would fill them in: the owner's words, the card's folder.
    captures = {"wish": "Add a dark mode", "who": "the whole team", "worktree": "some-card"}
    for name, turn in zip(first, turns, strict=True):
        turn = agent.filled(turn, captures)
        assert "{{" not in json.dumps(turn).replace("{{HEAD}}", "").replace("{{AGAIN}}", "")
        for again in ("", "-2"):  # the first answer and every later one
            answer = turn["answer"].replace("{{AGAIN}}", again)
            parsers[name](answer)  # raises ContractError if broken
