"""What the console says of its own syntax, in English and German (`[bot] locale`): its
lines at the end of /help, and the one-line hint for a line that starts like `+N`,
`>N` or `*N` but is not one (it is not sent: a typo must not become a chat message).

A transport knows nothing of the chat's catalogues (chatbot/chat/texts*.py), so the
console keeps its few sentences here; its network record hands the /help lines over.
"""

# Sentences read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

SYNTAX: dict[str, str] = {
    "en": (
        "In this console every message has a number [#N]:\n"
        ">N text — reply to message N (to a question: answers it)\n"
        "+N emoji — react to message N: +N 👍; +N 2 picks option 2 (2️⃣); +N +1 is 👍, +N -1 is 👎\n"
        "-N emoji — take that reaction back\n"
        "*N text — correct message N (an edit: the bot never runs an edited command)"
    ),
    "de": (
        "In dieser Konsole hat jede Nachricht eine Nummer [#N]:\n"
        ">N Text — auf Nachricht N antworten (auf eine Frage: beantwortet sie)\n"
        "+N Emoji — auf Nachricht N reagieren: +N 👍; +N 2 wählt Option 2 (2️⃣); +N +1 ist 👍, +N -1 ist 👎\n"
        "-N Emoji — diese Reaktion zurücknehmen\n"
        "*N Text — Nachricht N korrigieren (eine Bearbeitung: der Bot führt bearbeitete Befehle nie aus)"
    ),
}

HINTS: dict[str, dict[str, str]] = {
    "en": {
        "react": "Not sent: '{line}' is no reaction. React with +N and an emoji: +5 👍, +5 2 (option 2), +5 +1 (👍) or +5 -1 (👎). /help shows the console's syntax.",
        "reply": "Not sent: '{line}' is no reply. Reply with >N and your text: >5 German. /help shows the console's syntax.",
        "edit": "Not sent: '{line}' is no correction. Correct a message with *N and the new text: *5 /status. /help shows the console's syntax.",
    },
    "de": {
        "react": "Nicht gesendet: '{line}' ist keine Reaktion. Reagiere mit +N und einem Emoji: +5 👍, +5 2 (Option 2), +5 +1 (👍) oder +5 -1 (👎). /help zeigt die Syntax der Konsole.",
        "reply": "Nicht gesendet: '{line}' ist keine Antwort. Antworte mit >N und deinem Text: >5 Deutsch. /help zeigt die Syntax der Konsole.",
        "edit": "Nicht gesendet: '{line}' ist keine Korrektur. Korrigiere eine Nachricht mit *N und dem neuen Text: *5 /status. /help zeigt die Syntax der Konsole.",
    },
}


def syntax_help(locale: str) -> str:
    """The console's lines of /help (English for a locale it does not know)."""
    return SYNTAX.get(locale, SYNTAX["en"])


def hint(locale: str, kind: str, line: str) -> str:
    """The one line said instead of sending a malformed `kind` ("react", "reply",
    "edit") line; the line is quoted short, on one line."""
    shown = " ".join(line.split())
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    return HINTS.get(locale, HINTS["en"])[kind].format(line=shown)
