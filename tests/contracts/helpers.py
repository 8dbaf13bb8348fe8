"""Shared fixtures-as-values for the contract tests (plain module so hypothesis can use them)."""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from runners.contracts import ContractError
from runners.profiles import AllowedProfiles, LaneProfile

EXAMPLE_CONFIG = Path(__file__).resolve().parents[2] / "config" / "example.toml"


def allowed_from_toml(path: Path) -> AllowedProfiles:
    """AllowedProfiles from the [lanes.*] and [escalation.models] tables of a config file."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    lanes = {
        name: LaneProfile(
            lane=name,
            runtime=lane["runtime"],
            model=lane["model"],
            reasoning_effort=lane.get("reasoning_effort", ""),
            iteration_limit=lane["iteration_limit"],
            concurrency=lane.get("concurrency", 1),
        )
        for name, lane in data["lanes"].items()
    }
    pools = data.get("escalation", {}).get("models", {})
    return AllowedProfiles(
        lanes=lanes, escalation_models={rt: tuple(models) for rt, models in pools.items()}
    )


# Fixed profiles for the table-driven and property tests, so they do not change
# meaning when someone edits the example configuration. (Same values as
# config/example.toml today; the prompt tests render from that file itself.)
TEST_ALLOWED = AllowedProfiles(
    lanes={
        "light": LaneProfile("light", "codex", "gpt-5-codex-mini", "medium", 10, 2),
        "heavy": LaneProfile("heavy", "claude", "claude-opus-4-1", "", 25, 1),
    },
    escalation_models={
        "codex": ("gpt-5-codex", "gpt-5-codex-max"),
        "claude": ("claude-sonnet-4-5", "claude-opus-4-1"),
    },
)

PARENT = "parent-card"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def child(slug: str, **changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "slug": slug,
        "title": f"Title of {slug}",
        "wave": 1,
        "blocked_by": [],
        "recommended_lane": "light",
        "runtime": "codex",
        "model": "gpt-5-codex-mini",
        "reasoning_effort": "medium",
        "write_scope": [f"src/{slug}/**"],
        "acceptance_criteria": [f"{slug} works"],
        "intent_markdown": f"# Intent: {slug}\n\nGoal: make {slug} work.",
        "escalation": [],
    }
    value.update(changes)
    return value


def split_decision() -> dict[str, Any]:
    return {
        "schema_version": 1,
        "decision": "split",
        "reason": "Two separable parts.",
        "recommended_lane": None,
        "runtime": None,
        "model": None,
        "reasoning_effort": None,
        "human_action": None,
        "escalation": [],
        "children": [
            child(
                "api-layer",
                escalation=[
                    {"model": "gpt-5-codex", "reasoning_effort": "high", "iteration_limit": 20}
                ],
            ),
            child(
                "ui-layer",
                wave=2,
                blocked_by=["api-layer"],
                recommended_lane="heavy",
                runtime="claude",
                model="claude-opus-4-1",
                reasoning_effort=None,
                write_scope=["src/ui-layer/**", "src/api-layer/client.py"],
            ),
        ],
    }


def direct_decision() -> dict[str, Any]:
    return {
        "schema_version": 1,
        "decision": "direct_builder",
        "reason": "Small and precise.",
        "recommended_lane": "light",
        "runtime": "codex",
        "model": "gpt-5-codex-mini",
        "reasoning_effort": "medium",
        "human_action": None,
        "escalation": [
            {"model": "gpt-5-codex", "reasoning_effort": "", "iteration_limit": 20},
            {"model": "gpt-5-codex-max", "reasoning_effort": "high", "iteration_limit": 40},
        ],
        "children": [],
    }


def needs_human_decision() -> dict[str, Any]:
    return {
        "schema_version": 1,
        "decision": "needs_human",
        "reason": "The target database is not named.",
        "recommended_lane": None,
        "runtime": None,
        "model": None,
        "reasoning_effort": None,
        "human_action": "Name the database the report reads from.",
        "escalation": [],
        "children": [],
    }


def operator_answer(decision: dict[str, Any]) -> str:
    return f"===OPERATOR-DECISION===\n{json.dumps(decision, indent=2)}\n===END-OPERATOR-DECISION==="


def mutated(base: dict[str, Any], *path_and_value: Any) -> dict[str, Any]:
    """A deep copy of `base` with the value at `path` replaced (or deleted with DELETE)."""
    *path, value = path_and_value
    result = copy.deepcopy(base)
    target = result
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return result


DELETE = object()


def expect_error(call: Any, field: str) -> ContractError:
    """Run `call`, insist it raises ContractError naming exactly `field`."""
    with pytest.raises(ContractError) as caught:
        call()
    error = caught.value
    assert error.field == field, f"wrong field: {error}"
    assert field in str(error) and error.rule in str(error)
    return error
