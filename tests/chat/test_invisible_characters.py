"""An agent's command shown for approval reads as what will run (issue 33 point 9, the
Trojan Source class): every invisible character is shown escaped in chat, on the web
card page, in the inbox and in the card's history."""

from __future__ import annotations

import pytest

from chatbot.board.talk import first_line
from chatbot.domain.shown import visible
from chatbot.notify.format import inert
from chatbot.store.talk import TalkRow
from chatbot.web.talk_section import approvals
from chatbot.web.texts import Texts

INVISIBLE = {
    "\u200e": "\\u200e",  # left-to-right mark
    "\u200f": "\\u200f",  # right-to-left mark
    "\u061c": "\\u061c",  # Arabic letter mark
    "\u200b": "\\u200b",  # zero-width space
    "\ufeff": "\\ufeff",  # byte-order mark
    "\u2060": "\\u2060",  # word joiner
    "\u202e": "\\u202e",  # right-to-left override
    "\u2067": "\\u2067",  # right-to-left isolate
    "\u00a0": "\\xa0",  # no-break space: two words that are one argument
    "\u3164": "\\u3164",  # Hangul filler, a blank letter
    "\x1b": "\\x1b",  # escape
}


@pytest.mark.parametrize("char", INVISIBLE)
def test_each_invisible_character_is_escaped_everywhere_a_command_is_shown(char: str) -> None:
    command = f"rm -rf build{char}/cache"
    escaped = f"rm -rf build{INVISIBLE[char]}/cache"
    assert visible(command) == escaped
    assert escaped in inert(command)  # chat
    assert escaped in first_line(command)  # the card's history, the inbox's line
    row = TalkRow(
        1, 1, 1, "approval", command, "shell", f"/work{char}", None, "open", None, 0.0, None
    )
    page = str(approvals([row], Texts("en")))
    assert char not in page and INVISIBLE[char] in page  # the web card page


def test_plain_text_newlines_and_tabs_stay_as_they_are() -> None:
    text = "git commit -m 'Grüße'\n\tpython3 -c 'print(1)'"
    assert visible(text) == text
