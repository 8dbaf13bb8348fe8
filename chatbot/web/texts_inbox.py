"""The words of a signed-in owner's inbox on the board page (what /inbox lists in chat),
in English and German (merged into texts.py). The card's slug, a request's command and
an agent's command are put in beside these words, as links and code."""

# Sentences read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

EN: dict[str, str] = {
    "inbox_title": "Your inbox",
    "inbox_empty": "Nothing waits for you.",
    "inbox_more": "and {n} more: /inbox in chat",
    "inbox_reload": "As the page was loaded; reload for the latest.",
    "inbox_question": "asks: {text}",
    "inbox_split_plan": "its split plan waits for your approval: {text}",
    "inbox_request": "Request #{id} by {requester}:",
    "inbox_budget": "its budget stopped it ({text})",
    "inbox_approval": "its agent asks to run:",
    "inbox_interrupted": "its run was interrupted; its session is kept",
    "inbox_deploy": "approved, waits for deploy",
    "inbox_failed": "the {text} stage failed",
    "inbox_quota": "its run met the provider's quota or rate limit ({text}); it runs again by itself at {until}",
    "inbox_routine": "⏰ routine {text}, paused itself",
    "inbox_proposal": "💡 its agent proposes a follow-up card: {text}",
    "inbox_in_chat": "in chat:",
    "act_deny_reason": "Deny with a reason…",
    "request_actions_only": "A request can only be accepted or declined here: nothing was changed.",
}

DE: dict[str, str] = {
    "inbox_title": "Dein Eingang",
    "inbox_empty": "Nichts wartet auf dich.",
    "inbox_more": "und {n} weitere: /inbox im Chat",
    "inbox_reload": "Stand beim Laden der Seite; neu laden für den neuesten.",
    "inbox_question": "fragt: {text}",
    "inbox_split_plan": "ihr Aufteilungsplan wartet auf deine Freigabe: {text}",
    "inbox_request": "Anfrage #{id} von {requester}:",
    "inbox_budget": "ihr Budget hat sie angehalten ({text})",
    "inbox_approval": "ihr Agent bittet, auszuführen:",
    "inbox_interrupted": "ihr Lauf wurde unterbrochen; seine Sitzung bleibt",
    "inbox_deploy": "freigegeben, wartet aufs Deployment",
    "inbox_failed": "Schritt {text} ist fehlgeschlagen",
    "inbox_quota": "ihr Lauf traf das Kontingent oder Ratenlimit des Anbieters ({text}); er läuft um {until} von selbst wieder",
    "inbox_routine": "⏰ Routine {text}, hat sich pausiert",
    "inbox_proposal": "💡 sein Agent schlägt eine Folgekarte vor: {text}",
    "inbox_in_chat": "im Chat:",
    "act_deny_reason": "Mit Begründung ablehnen …",
    "request_actions_only": "Eine Anfrage lässt sich hier nur annehmen oder ablehnen: nichts wurde geändert.",
}
