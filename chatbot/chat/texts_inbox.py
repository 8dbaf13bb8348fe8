"""The sentences of /inbox, and /why's (chatbot/domain/why_texts.py), in English and
German (merged into texts.py).

`{ways}` is the list of commands that resolve an item, `{since}` a time.
"""

from __future__ import annotations

from chatbot.domain import why_texts

EN: dict[str, str] = {
    "cmd_inbox": "everything that waits for you, each with what resolves it",
    "cmd_why": "the first thing that holds a card, and what moves it on",
    "inbox_empty": "Nothing waits for you.",
    "inbox_head": "Waiting for you ({count}), oldest first:",
    "inbox_more": "… and {count} more; `chatbot inbox` lists them all.",
    "inbox_question": "❓ {slug} asks since {since}: {text} — reply to its message or {ways}",
    "inbox_split_plan": "🧭 {slug}: its split plan waits for your approval since {since}: {text} — {ways}",
    "inbox_request": "🙋 request #{id} by {requester} since {since}: {text} — {ways}",
    "inbox_request_own": "🙋 your request #{id} since {since}: {text} — an owner decides it",
    "inbox_budget": "💸 {slug}: its budget stopped it since {since} — {ways}",
    "inbox_approval": "🔐 {slug}: its agent asks since {since} to run: {text} — {ways}",
    "inbox_interrupted": "⏸ {slug}: interrupted since {since} — {ways}",
    "inbox_deploy": "🚀 {slug}: approved since {since}, waits for deploy — {ways}",
    "inbox_failed": "❌ {slug}: the {text} stage failed at {since} — {ways}",
    "inbox_quota": "⏳ {slug}: its run met the provider's quota or rate limit ({text}); it runs again by itself at {until} — nothing to do, or {ways}",
    "inbox_routine": "⏰ routine {text} — paused itself at {since}: {ways}",
    "inbox_proposal": "💡 {slug}: its agent proposed a follow-up card since {since}: {text} — {ways}",
    **why_texts.EN,
}

DE: dict[str, str] = {
    "cmd_inbox": "alles, was auf dich wartet, das Älteste zuerst, jeweils mit dem, was es erledigt",
    "cmd_why": "das Erste, was eine Karte aufhält, und was sie weiterbringt",
    "inbox_empty": "Nichts wartet auf dich.",
    "inbox_head": "Wartet auf dich ({count}), das Älteste zuerst:",
    "inbox_more": "… und {count} weitere; `chatbot inbox` listet alle.",
    "inbox_question": "❓ {slug} fragt seit {since}: {text} — antworte auf die Nachricht oder {ways}",
    "inbox_split_plan": "🧭 {slug}: ihr Aufteilungsplan wartet seit {since} auf deine Freigabe: {text} — {ways}",
    "inbox_request": "🙋 Anfrage #{id} von {requester} seit {since}: {text} — {ways}",
    "inbox_request_own": "🙋 deine Anfrage #{id} seit {since}: {text} — ein Owner entscheidet",
    "inbox_budget": "💸 {slug}: sein Budget hält es seit {since} an — {ways}",
    "inbox_approval": "🔐 {slug}: sein Agent bittet seit {since}, auszuführen: {text} — {ways}",
    "inbox_interrupted": "⏸ {slug}: unterbrochen seit {since} — {ways}",
    "inbox_deploy": "🚀 {slug}: seit {since} freigegeben, wartet aufs Deployment — {ways}",
    "inbox_failed": "❌ {slug}: Schritt {text} fehlgeschlagen um {since} — {ways}",
    "inbox_quota": "⏳ {slug}: ihr Lauf traf das Kontingent oder Ratenlimit des Anbieters ({text}); er läuft um {until} von selbst wieder — nichts zu tun, oder {ways}",
    "inbox_routine": "⏰ Routine {text} — hat sich um {since} pausiert: {ways}",
    "inbox_proposal": "💡 {slug}: sein Agent schlägt seit {since} eine Folgekarte vor: {text} — {ways}",
    **why_texts.DE,
}
