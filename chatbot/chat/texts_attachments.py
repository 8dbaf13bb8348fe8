"""What `/status <slug>` (and `chatbot card`) says of a card's files, in English and
German (merged into texts.py)."""

# Sentences read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

EN: dict[str, str] = {
    "card_files": "files:",
    "card_file": "  📎 {name} — {kind}, {size}, {who}, {at}, {purpose}",
    "card_file_gone": "  📎 {name} — {kind}, {size}, {who}, {at}, {purpose}; dropped from the file store to make room",
    "card_files_more": "  … and {count} more",
    "file_kind_image": "picture",
    "file_kind_text": "text file",
    "file_kind_pdf": "PDF",
    "file_kind_audio": "recording",
    "file_from": "from {who}",
    "file_from_bot": "from the bot",
    "file_for_card": "for the card",
    "file_for_steer": "with a steer",
    "file_for_answer": "with an answer",
    "file_for_draft": "with the draft",
    "file_for_outgoing": "sent by the bot",
    "file_for_loose": "not attached yet",
}

DE: dict[str, str] = {
    "card_files": "Dateien:",
    "card_file": "  📎 {name} — {kind}, {size}, {who}, {at}, {purpose}",
    "card_file_gone": "  📎 {name} — {kind}, {size}, {who}, {at}, {purpose}; aus dem Dateispeicher entfernt, um Platz zu schaffen",
    "card_files_more": "  … und {count} weitere",
    "file_kind_image": "Bild",
    "file_kind_text": "Textdatei",
    "file_kind_pdf": "PDF",
    "file_kind_audio": "Aufnahme",
    "file_from": "von {who}",
    "file_from_bot": "vom Bot",
    "file_for_card": "für die Karte",
    "file_for_steer": "mit einer Lenkung",
    "file_for_answer": "mit einer Antwort",
    "file_for_draft": "mit dem Entwurf",
    "file_for_outgoing": "vom Bot gesendet",
    "file_for_loose": "noch nicht angehängt",
}
