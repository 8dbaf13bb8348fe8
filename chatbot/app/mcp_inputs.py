"""What `chatbot mcp`'s tools accept and how they answer: strict inputs, inert outputs.

An assistant's arguments are untrusted as a model's answer is: every one has a type,
a length and a character set (pydantic checks them before a tool runs, and a call
that fails changes nothing). What the board gives back may hold what agents and chat
wrote; it leaves as JSON text, with every control and formatting character escaped,
so nothing in it is markup or steers a terminal.
"""

from __future__ import annotations

import json
import re
import unicodedata
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from chatbot.domain.phases import Phase

SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,60}$"
# Words an owner writes through an assistant: a draft, an answer, a steer, a comment.
MAX_TEXT_CHARS = 4000
MAX_PATH_CHARS = 400
MAX_LIMIT = 200

_WHITESPACE_KEPT = {"\n", "\t"}


def no_control_characters(text: str) -> str:
    """Refuses C0/C1 controls (but newline and tab) and the invisible formatting
    characters (bidi overrides, zero-width): they hide what a text says."""
    for char in text:
        if char in _WHITESPACE_KEPT:
            continue
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Cs", "Co"):
            raise ValueError(f"contains the control character U+{ord(char):04X}; send plain text")
    return text


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("is empty; write the words")
    return text


Slug = Annotated[
    str,
    Field(
        min_length=1,
        max_length=61,
        pattern=SLUG_PATTERN,
        description="a card's slug: lower-case letters, digits and dashes",
    ),
]
Text = Annotated[
    str,
    Field(min_length=1, max_length=MAX_TEXT_CHARS),
    AfterValidator(no_control_characters),
    AfterValidator(_not_blank),
]
RepoPath = Annotated[
    str,
    Field(min_length=1, max_length=MAX_PATH_CHARS, pattern=r"^[^/\\][^\\]*$"),
    AfterValidator(no_control_characters),
]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT)]
LineNumber = Annotated[int, Field(ge=1, le=10_000_000)]
Option = Annotated[int, Field(ge=1, le=50, description="the option's number, from 1")]
RequestId = Annotated[int, Field(ge=1, le=2**53)]
# The phases by their stored names, so a filter is one of them or refused.
PhaseName = StrEnum("PhaseName", {phase.name: phase.value for phase in Phase})  # type: ignore[misc]


class CardAction(StrEnum):
    """What `act_on_card` does: each is the chat command of the same name."""

    START = "start"
    CONFIRM = "confirm"
    RETRY = "retry"
    FIX = "fix"
    CANCEL = "cancel"
    ARCHIVE = "archive"
    DEPLOY = "deploy"
    APPROVE = "approve"


class RequestDecision(StrEnum):
    ACCEPT = "accept"
    DECLINE = "decline"


# Characters JSON leaves as they are but a reader's screen would not: C1 controls,
# line and paragraph separators, bidi and zero-width formatting.
_SHOWN_ESCAPED = re.compile(
    r"[\u0080-\u009f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]"
)


def inert_json(document: Any) -> str:
    """`document` as JSON text whose strings cannot act as anything but text."""
    text = json.dumps(document, indent=2, ensure_ascii=False, default=str)
    return _SHOWN_ESCAPED.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
