"""The sentences of the short /help (where to start), in English and German (merged
into texts.py). The full list (`/help all`) is made of the command and reaction texts
in texts.py.
"""

# Sentences read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

EN: dict[str, str] = {
    "help_start": "Start with these:",
    "help_start_answers": "The bot asks you questions: reply to one to answer it, or react 1️⃣–4️⃣ to pick an option.",
    "help_more": "/help all lists every command and reaction; /help <command> explains one.",
    "help_more_requester": "/help all lists everything you may use; /help <command> explains one.",
}

DE: dict[str, str] = {
    "help_start": "Am besten damit anfangen:",
    "help_start_answers": "Der Bot stellt dir Fragen: Antworte auf eine, um sie zu beantworten, oder reagiere mit 1️⃣–4️⃣, um eine Option zu wählen.",
    "help_more": "/help all zeigt alle Befehle und Reaktionen; /help <Befehl> erklärt einen.",
    "help_more_requester": "/help all zeigt alles, was du verwenden darfst; /help <Befehl> erklärt einen.",
}
