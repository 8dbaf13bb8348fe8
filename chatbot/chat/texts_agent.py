# ruff: noqa: E501 - sentences read best whole
"""The chat's sentences about a working agent's questions and proposals (merged into
texts.py)."""

from __future__ import annotations

EN: dict[str, str] = {
    "agent_answered": "✔️ {slug}: your answer goes to the {role}; it reads it at its next step. The card stays {phase}.",
    "proposal_confirmed": "✅ {proposal} is the planned card {new_slug} now: /start {new_slug} builds it.",
    "proposal_refused": "🗑️ {proposal} is dropped; no card was created.",
    "proposal_decided": "{proposal} was {state} already (by {by}); nothing changed.",
    "proposal_unknown": "There is no {proposal}: a proposal is named as in its post, e.g. proposal-3.",
    "proposal_taken": "{proposal} was not made: {detail}",
}

DE: dict[str, str] = {
    "agent_answered": "✔️ {slug}: Deine Antwort geht an den {role}; er liest sie bei seinem nächsten Schritt. Die Karte bleibt {phase}.",
    "proposal_confirmed": "✅ {proposal} ist jetzt die geplante Karte {new_slug}: /start {new_slug} baut sie.",
    "proposal_refused": "🗑️ {proposal} ist verworfen; keine Karte wurde angelegt.",
    "proposal_decided": "{proposal} wurde bereits {state} (von {by}); nichts geändert.",
    "proposal_unknown": "Es gibt kein {proposal}: Ein Vorschlag heißt wie in seiner Nachricht, z. B. proposal-3.",
    "proposal_taken": "{proposal} wurde nicht angelegt: {detail}",
}

#: How a proposal's state is said in `proposal_decided`.
STATES: dict[str, dict[str, str]] = {
    "en": {"confirmed": "confirmed", "refused": "refused"},
    "de": {"confirmed": "bestätigt", "refused": "verworfen"},
}
