# ruff: noqa: E501 - sentences read best whole
"""What the rooms are told of a working agent's questions and proposals, in English and
German (merged into texts.py). `{text}`, `{title}`, `{goal}` and `{scope}` are the
agent's words, already made inert (notify/agent_asks.py)."""

from __future__ import annotations

EN: dict[str, str] = {
    "agent_asked": "❓ {slug}: the {role} asks while it works:\n{text}",
    "agent_asked_hint": "Reply to this message, react with the option's number, or /answer {slug} <text>. The {role} waits up to {timeout}; unanswered, it decides itself and says so in its report.",
    "agent_asked_full_text": "The whole question is on the card's web page (/web, then {slug}).",
    "agent_ask_timed_out": "⌛ {slug}: nobody answered the {role}'s question in time ({why}); it decides itself and says so in its report:\n{text}",
    "agent_ask_closed": "✖️ {slug}: the {role}'s question no longer waits ({why}):\n{text}",
    "agent_proposed": "💡 {slug}: the {role} proposes a follow-up card {proposal} (it would be named {new_slug}):\n{text}\nNothing is created until you confirm: react 👍 or send /confirm {proposal}; 👎 or /cancel {proposal} drops it.",
    "reminder_agent": "⏰ {slug}: the agent has waited {waited} for your answer:\n{text}\nReply to its question, react with an option's number, or /answer {slug} <text>.",
}

DE: dict[str, str] = {
    "agent_asked": "❓ {slug}: Der {role} fragt während der Arbeit:\n{text}",
    "agent_asked_hint": "Antworte auf diese Nachricht, reagiere mit der Nummer der Option oder /answer {slug} <Text>. Der {role} wartet bis zu {timeout}; ohne Antwort entscheidet er selbst und sagt es in seinem Bericht.",
    "agent_asked_full_text": "Die ganze Frage steht auf der Seite der Karte im Web-Board (/web, dann {slug}).",
    "agent_ask_timed_out": "⌛ {slug}: Niemand hat die Frage des {role} rechtzeitig beantwortet ({why}); er entscheidet selbst und sagt es in seinem Bericht:\n{text}",
    "agent_ask_closed": "✖️ {slug}: Die Frage des {role} wartet nicht mehr ({why}):\n{text}",
    "agent_proposed": "💡 {slug}: Der {role} schlägt eine Folgekarte {proposal} vor (sie hieße {new_slug}):\n{text}\nNichts wird angelegt, bevor du bestätigst: reagiere mit 👍 oder sende /confirm {proposal}; 👎 oder /cancel {proposal} verwirft sie.",
    "reminder_agent": "⏰ {slug}: Der Agent wartet seit {waited} auf deine Antwort:\n{text}\nAntworte auf seine Frage, reagiere mit der Nummer einer Option oder /answer {slug} <Text>.",
}
