"""What the card page says of a card's files, in English and German (merged into
texts.py)."""

from __future__ import annotations

EN: dict[str, str] = {
    "attachments": "Attachments",
    "col_file": "file",
    "col_size": "size",
    "col_file_for": "for",
    "file_kind_image": "picture",
    "file_kind_text": "text file",
    "file_kind_pdf": "PDF",
    "file_kind_audio": "recording",
    "file_by_bot": "the bot",
    "file_for_card": "the card",
    "file_for_steer": "a steer",
    "file_for_answer": "an answer",
    "file_for_draft": "the draft",
    "file_for_outgoing": "sent by the bot",
    "file_for_loose": "not attached yet",
    "file_gone": "dropped from the file store to make room",
}

DE: dict[str, str] = {
    "attachments": "Anhänge",
    "col_file": "Datei",
    "col_size": "Größe",
    "col_file_for": "für",
    "file_kind_image": "Bild",
    "file_kind_text": "Textdatei",
    "file_kind_pdf": "PDF",
    "file_kind_audio": "Aufnahme",
    "file_by_bot": "der Bot",
    "file_for_card": "die Karte",
    "file_for_steer": "eine Lenkung",
    "file_for_answer": "eine Antwort",
    "file_for_draft": "den Entwurf",
    "file_for_outgoing": "vom Bot gesendet",
    "file_for_loose": "noch nicht angehängt",
    "file_gone": "aus dem Dateispeicher entfernt, um Platz zu schaffen",
}
