"""The words of a signed-in owner's buttons on the board page, in English and German
(merged into texts.py)."""

from __future__ import annotations

EN: dict[str, str] = {
    "act_confirm": "Confirm the plan",
    "act_answer_words": "Answer in words…",
    "act_steer_page": "Steer…",
}

DE: dict[str, str] = {
    "act_confirm": "Plan bestätigen",
    "act_answer_words": "In Worten antworten …",
    "act_steer_page": "Lenken …",
}
