"""What a working agent sends the board (a question, a proposal), checked as strictly
as any model answer: the agent is untrusted, its words reach people's phones.

Control characters are dropped (a newline stays in free text); lengths and counts are
held, and a breach is refused whole with a message that says what to change, never
cut silently: the agent reads the refusal as its tool's result and can send again.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from chatbot.board.errors import BoardError
from chatbot.store.questions import MAX_OPTIONS

MAX_QUESTION_CHARS = 4000
MAX_OPTION_CHARS = 80
MAX_TITLE_CHARS = 120
MAX_GOAL_CHARS = 4000
MAX_SCOPE_CHARS = 2000
#: A slug made from a title stays well inside the 61 characters a slug may have, so
#: "-2", "-3" … still fit.
MAX_SLUG_STEM = 48


class AgentInputRefused(BoardError):
    """What an agent sent cannot be taken as it is; the message says what to change."""


def cleaned(value: object, what: str, *, lines: bool) -> str:
    """`value` as text without control characters (newlines kept when `lines`), stripped."""
    if not isinstance(value, str):
        raise AgentInputRefused(f"{what} must be text")
    text = value.replace("\r\n", "\n").replace("\r", "\n")
    kept = "".join(
        char for char in text if (lines and char == "\n") or unicodedata.category(char) != "Cc"
    )
    return kept.strip()


def bounded(value: object, what: str, least: int, most: int, *, lines: bool = True) -> str:
    text = cleaned(value, what, lines=lines)
    if len(text) < least:
        raise AgentInputRefused(f"{what} is empty; write at least {least} character(s)")
    if len(text) > most:
        raise AgentInputRefused(
            f"{what} has {len(text)} characters; at most {most} are taken, write it shorter"
        )
    return text


def question(text: object, options: object) -> tuple[str, list[str]]:
    """The question's text and options as they may be posted, or AgentInputRefused."""
    said = bounded(text, "the question", 1, MAX_QUESTION_CHARS)
    if options is None:
        options = ()
    if isinstance(options, str) or not isinstance(options, Sequence):
        raise AgentInputRefused("the options must be a list of short answers")
    if len(options) > MAX_OPTIONS:
        raise AgentInputRefused(
            f"{len(options)} options given; at most {MAX_OPTIONS} are taken (the owner "
            "can always answer in words)"
        )
    offered: list[str] = []
    for number, option in enumerate(options, 1):
        if isinstance(option, str) and any(unicodedata.category(char) == "Cc" for char in option):
            raise AgentInputRefused(
                f"option {number} holds a line break or control character; an option is one line"
            )
        offered.append(bounded(option, f"option {number}", 1, MAX_OPTION_CHARS, lines=False))
    folded = [option.casefold() for option in offered]
    if len(set(folded)) != len(folded):
        raise AgentInputRefused("two options are the same; each option must differ")
    return said, offered


def proposal(title: object, goal: object, scope: object) -> tuple[str, str, str]:
    return (
        bounded(title, "the title", 1, MAX_TITLE_CHARS, lines=False),
        bounded(goal, "the goal", 1, MAX_GOAL_CHARS),
        bounded("" if scope is None else scope, "the scope", 0, MAX_SCOPE_CHARS),
    )


#: Letters NFKD leaves alone or makes less readable ("Größe" -> "groesse", not "groe").
_SPELLED = str.maketrans(
    {"ß": "ss", "ä": "ae", "ö": "oe", "ü": "ue", "Ä": "ae", "Ö": "oe", "Ü": "ue"}
)


def slug_stem(title: str) -> str:
    """A card name from a title: lowercase ASCII letters and digits joined by '-'."""
    spelled = unicodedata.normalize("NFKD", title.translate(_SPELLED))
    ascii_title = spelled.encode("ascii", "ignore").decode()
    stem = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
    stem = stem[:MAX_SLUG_STEM].rstrip("-")
    return stem or "follow-up"
