"""The question format shared by the planner's draft mode and the fixer.

Body text, then optionally one last line `options: a | b | c` (the German
`optionen:` is accepted too, as German prompts write it) with at most four
quick-reply choices, or `none` / `keine` for none. The bot posts the text and
offers the choices as replies, so each choice must be short and distinct.
"""

from __future__ import annotations

import re
from typing import Annotated, TypeVar

from pydantic import BaseModel, Field

from runners.contracts.errors import ContractError
from runners.contracts.validation import STRICT, NonBlank, SingleLine, build

MAX_OPTIONS = 4
MAX_OPTION_CHARS = 100
MAX_QUESTION_CHARS = 4000

_OPTIONS_LINE_RE = re.compile(r"^[ \t]*(?:options|optionen)[ \t]*:(.*)$", re.IGNORECASE)
_NO_OPTIONS = {"", "none", "keine"}


class Question(BaseModel):
    model_config = STRICT

    text: Annotated[NonBlank, Field(max_length=MAX_QUESTION_CHARS)]
    options: Annotated[tuple[SingleLine, ...], Field(max_length=MAX_OPTIONS)]


Q = TypeVar("Q", bound=Question)


def parse_question(content: str, field: str, kind: type[Q]) -> Q:
    """Split a question block's content into text and options; `field` names the block."""
    lines = content.strip().split("\n")
    option_lines = [index for index, line in enumerate(lines) if _OPTIONS_LINE_RE.match(line)]
    options: tuple[str, ...] = ()
    if len(option_lines) > 1:
        raise ContractError(f"{field}.options", "only one options line is allowed")
    if option_lines:
        at = option_lines[0]
        if at != len(lines) - 1:
            raise ContractError(f"{field}.options", "the options line must be the last line")
        match = _OPTIONS_LINE_RE.match(lines[at])
        assert match is not None
        options = _split_options(match.group(1).strip(), f"{field}.options")
        lines = lines[:at]
    text = "\n".join(lines).strip()
    if not text:
        raise ContractError(f"{field}.text", "the question must not be empty")
    if len(text) > MAX_QUESTION_CHARS:
        raise ContractError(f"{field}.text", f"longer than {MAX_QUESTION_CHARS} characters")
    return build(kind, field, text=text, options=options)


def _split_options(raw: str, field: str) -> tuple[str, ...]:
    if raw.casefold() in _NO_OPTIONS:
        return ()
    options = tuple(option.strip() for option in raw.split("|"))
    if len(options) > MAX_OPTIONS:
        raise ContractError(field, f"{len(options)} choices, at most {MAX_OPTIONS} allowed")
    seen: set[str] = set()
    for index, option in enumerate(options):
        if not option:
            raise ContractError(f"{field}[{index}]", "empty choice")
        if len(option) > MAX_OPTION_CHARS:
            raise ContractError(f"{field}[{index}]", f"longer than {MAX_OPTION_CHARS} characters")
        if option.casefold() in seen:
            raise ContractError(f"{field}[{index}]", f"{option!r} is offered twice")
        seen.add(option.casefold())
    return options
