"""An agent's text shown as inert, as it will run: every character a reader cannot see
becomes a visible escape (issue 33, the Trojan Source class, CVE-2021-42574).

Control characters; format characters (Unicode Cf: bidi marks and overrides, zero-width
space and joiners, the byte-order mark, word joiner, U+061C); line and paragraph
separators; spaces other than the plain one (a no-break space reads as two words of
one argument); private-use and unassigned code points; and the blank letters some
scripts have. A newline and a tab stay: a command may have lines.
"""

from __future__ import annotations

import unicodedata

_ESCAPED = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs", "Co", "Cn", "Cs"})
_KEPT = frozenset({"\n", "\t", " "})
_BLANK_LETTERS = frozenset({"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800"})


def _hidden(char: str) -> bool:
    if char in _KEPT:
        return False
    return unicodedata.category(char) in _ESCAPED or char in _BLANK_LETTERS


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every invisible character written as `\\xNN` or `\\uNNNN`."""
    if text.isascii() and text.isprintable():
        return text  # the common case, at once
    return "".join(_escape(char) if _hidden(char) else char for char in text)
