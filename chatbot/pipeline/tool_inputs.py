"""What a run's tools take (`chatbot.pipeline.run_tools`), checked as strictly as any
model answer: the agent is untrusted, and its words reach people's phones.

Each tool's input is one pydantic model: no unknown fields, no coercion, lengths and
counts held (the board's own limits, board/agent_input.py), and no control character
(only a line break or a tab in free text). A breach is refused whole with a message
naming the field and the fix; the agent reads it as the tool's result and may send
again. Nothing is cut silently.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

#: The board's limits (board/agent_input.py; tests/pipeline/test_run_tools.py holds them equal).
MAX_QUESTION_CHARS = 4000
MAX_OPTIONS = 4
MAX_OPTION_CHARS = 80
MAX_TITLE_CHARS = 120
MAX_GOAL_CHARS = 4000
MAX_SCOPE_CHARS = 2000

STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)
# C0 and C1 controls and DEL; free text keeps \t and \n. Line and paragraph separators
# would break a line in chat as a newline does.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_LINE_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _text(value: str) -> str:
    if _CONTROL_RE.search(value):
        raise ValueError("holds a control character; send plain text (line breaks are fine)")
    if not value.strip():
        raise ValueError("is empty")
    return value


def _line(value: str) -> str:
    if _LINE_CONTROL_RE.search(value):
        raise ValueError("holds a line break or a control character; send one plain line")
    if not value.strip():
        raise ValueError("is empty")
    return value


Text = Annotated[str, AfterValidator(_text)]
Line = Annotated[str, AfterValidator(_line)]


def _distinct(options: tuple[str, ...]) -> tuple[str, ...]:
    seen = {option.strip().casefold() for option in options}
    if len(seen) != len(options):
        raise ValueError("offers one answer twice; make each option different")
    return options


class AskOwner(BaseModel):
    model_config = STRICT

    question: Annotated[
        Text,
        Field(
            max_length=MAX_QUESTION_CHARS,
            description="What you need the owner to decide, in a few plain sentences.",
        ),
    ]
    options: tuple[Annotated[Line, Field(max_length=MAX_OPTION_CHARS)], ...] = Field(
        default=(),
        max_length=MAX_OPTIONS,
        description=f"Up to {MAX_OPTIONS} short answers to choose from (optional).",
    )

    @field_validator("options")
    @classmethod
    def _distinct_options(cls, options: tuple[str, ...]) -> tuple[str, ...]:
        return _distinct(options)


class CardContextInput(BaseModel):
    model_config = STRICT


class ProposeCard(BaseModel):
    model_config = STRICT

    title: Annotated[Line, Field(max_length=MAX_TITLE_CHARS, description="A short title.")]
    goal: Annotated[
        Text, Field(max_length=MAX_GOAL_CHARS, description="What the follow-up card is to achieve.")
    ]
    scope: Annotated[
        Text,
        Field(max_length=MAX_SCOPE_CHARS, description="What it covers and what it leaves out."),
    ]


_PROBLEMS = {
    "extra_forbidden": "is not a field of this tool",
    "missing": "is required",
    "string_type": "must be a string",
    "tuple_type": "must be an array of strings",
}
_LISTS = frozenset({"options"})


def refusal(error: ValidationError, limits: dict[str, str]) -> str:
    """The validation error as a message for the agent: each field, what is wrong, the fix.

    `limits` says, per field, the limit to name ("at most 4000 characters")."""
    lines = []
    for problem in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or "the input"
        field = str(problem["loc"][0]) if problem["loc"] else ""
        kind = str(problem["type"])
        limit = None
        if kind == "value_error":
            said = str(problem["msg"]).removeprefix("Value error, ")
        elif kind in ("string_too_long", "too_long"):
            # One option too long, too many options, or a text too long.
            many = kind == "too_long" and len(problem["loc"]) == 1 and field in _LISTS
            said = "has too many items" if many else "is too long"
            item = isinstance(problem["loc"][-1], int)
            limit = limits.get(f"{field}[]" if item else field)
        else:
            said = _PROBLEMS.get(kind, str(problem["msg"]))
        lines.append(f"{where} {said}" + (f" ({limit})" if limit else ""))
    return "refused: " + "; ".join(lines[:5]) + ". Nothing was sent; correct it and call again."


ASK_LIMITS = {
    "question": f"at most {MAX_QUESTION_CHARS} characters",
    "options": f"at most {MAX_OPTIONS} options",
    "options[]": f"each option at most {MAX_OPTION_CHARS} characters",
}
PROPOSE_LIMITS = {
    "title": f"at most {MAX_TITLE_CHARS} characters",
    "goal": f"at most {MAX_GOAL_CHARS} characters",
    "scope": f"at most {MAX_SCOPE_CHARS} characters",
}
