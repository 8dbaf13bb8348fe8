"""The card page's own words around /why's sentence (chatbot/domain/why_texts.py), in
English and German (merged into texts.py)."""

from __future__ import annotations

from chatbot.domain import why_texts

EN: dict[str, str] = {
    "why_label": "Why it waits:",
    **why_texts.EN,
}

DE: dict[str, str] = {
    "why_label": "Warum sie wartet:",
    **why_texts.DE,
}
