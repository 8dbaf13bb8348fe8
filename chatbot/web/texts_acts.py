"""The words of a signed-in owner's buttons on the board page, in English and German
(merged into texts.py)."""

from __future__ import annotations

EN: dict[str, str] = {
    "act_confirm": "Confirm the plan",
    "act_answer_words": "Answer in words…",
    "act_steer_page": "Steer…",
    "new_card": "New card",
    "new_card_text": "What should it do? The planner asks what it needs to know.",
    "act_draft": "Start the draft",
}

DE: dict[str, str] = {
    "act_confirm": "Plan bestätigen",
    "act_answer_words": "In Worten antworten …",
    "act_steer_page": "Lenken …",
    "new_card": "Neue Karte",
    "new_card_text": "Was soll sie tun? Der Planner fragt, was er wissen muss.",
    "act_draft": "Entwurf beginnen",
}
