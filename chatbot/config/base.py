"""What every section shares: strict, frozen models, and the value shapes they use."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from chatbot.config_file import ENV_NAME
from runners.profiles import MODEL_PATTERN, REASONING_EFFORT_PATTERN
from runners.runtimes.registry import NAMES as RUNTIME_NAMES

USD = Annotated[float, Field(ge=0, le=1_000_000)]
# "" means "the CLI's default model".
ModelName = Annotated[str, StringConstraints(pattern=f"^$|{MODEL_PATTERN}")]
Effort = Annotated[str, StringConstraints(pattern=REASONING_EFFORT_PATTERN)]
EnvName = Annotated[str, StringConstraints(pattern=ENV_NAME)]
# The registry's names, in its order: an unknown one is told "use one of codex, claude, ...".
# mypy cannot read a Literal of a tuple built at import; pydantic checks it.
RuntimeName = Literal[RUNTIME_NAMES]  # type: ignore[valid-type]


class ConfigError(Exception):
    """The configuration cannot be used; the message says where and why."""


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
