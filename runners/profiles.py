"""Names and value patterns every layer agrees on: slugs, models, efforts, lane profiles.

`runners` owns these because the contracts and the runtime adapters must check the
same patterns before anything reaches a file name or an argv; `chatbot` imports
them from here (the import direction is chatbot -> runners, never back). The runtimes'
names are the registry's (runners/runtimes/registry.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,60}$"
SLUG_RE = re.compile(SLUG_PATTERN)

# Model names reach an argv; allow what real provider model ids use and nothing
# that a shell or an option parser could read as something else.
MODEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$"
MODEL_RE = re.compile(MODEL_PATTERN)

# "" means "the CLI's default effort".
REASONING_EFFORT_PATTERN = r"^(|[a-z]{1,16})$"
REASONING_EFFORT_RE = re.compile(REASONING_EFFORT_PATTERN)

ITERATION_LIMIT_MIN = 5
ITERATION_LIMIT_MAX = 40
MAX_ESCALATION_STEPS = 2


def is_valid_slug(value: object) -> bool:
    return isinstance(value, str) and SLUG_RE.fullmatch(value) is not None


def is_valid_model(value: object) -> bool:
    return isinstance(value, str) and MODEL_RE.fullmatch(value) is not None


def is_valid_reasoning_effort(value: object) -> bool:
    return isinstance(value, str) and REASONING_EFFORT_RE.fullmatch(value) is not None


@dataclass(frozen=True)
class LaneProfile:
    """One configured builder lane: the only runtime/model/effort a role may pick for it."""

    lane: str
    runtime: str
    model: str
    reasoning_effort: str
    iteration_limit: int
    concurrency: int = 1


@dataclass(frozen=True)
class AllowedProfiles:
    """The allow-list a model answer is validated against and a prompt is rendered from.

    Built once from configuration, so the prompt and the validator can never disagree.
    """

    lanes: Mapping[str, LaneProfile]
    escalation_models: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def lane(self, name: str) -> LaneProfile | None:
        return self.lanes.get(name)

    def escalation_pool(self, runtime: str) -> tuple[str, ...]:
        return tuple(self.escalation_models.get(runtime, ()))
