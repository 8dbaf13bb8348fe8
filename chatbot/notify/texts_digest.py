"""The daily digest's sentences, in English and German (merged into texts.py).

`{since}` and `{until}` are the bot's local times; `{ways}` the commands that resolve
an item, as /inbox names them.
"""

from __future__ import annotations

EN: dict[str, str] = {
    "digest_quiet": "📰 Nothing moved since {since}; nothing waits.",
    "digest_head": "📰 Since {since}:",
    "digest_moved": "🔀 {moves} on {cards}.",
    "digest_still": "🔀 Nothing moved.",
    "digest_finished": "✅ finished: {cards}",
    "digest_started": "▶️ started: {cards}",
    "digest_more": "and {count} more",
    "digest_waits": "📥 Waiting for you: {count}; the oldest, for {age}: {item}",
    "digest_no_waits": "📥 Nothing waits for you.",
    "digest_wait_question": "❓ {slug} asks: {text} — reply to it or {ways}",
    "digest_wait_split_plan": "🧭 {slug}: its split plan ({text}) waits for your approval — {ways}",
    "digest_wait_request": "🙋 request #{id} by {requester}: {text} — {ways}",
    "digest_wait_budget": "💸 {slug}: its budget stopped it — {ways}",
    "digest_wait_approval": "🔐 {slug}: its agent asks to run a command — {ways}",
    "digest_wait_interrupted": "⏸ {slug}: interrupted — {ways}",
    "digest_wait_deploy": "🚀 {slug}: approved, waits for deploy — {ways}",
    "digest_wait_failed": "❌ {slug}: its {text} stage failed — {ways}",
    "digest_wait_quota": "⏳ {slug}: waits for the provider's quota until {until}; nothing to do, or {ways}",
    "digest_wait_routine": "routine {text} (paused itself: {ways})",
    "digest_wait_proposal": "💡 {slug}: its agent proposes a follow-up card, {text} — {ways}",
    "digest_spend": "💸 Spent {usd} in {runs}.",
    "digest_no_spend": "💸 Nothing spent.",
    "digest_today": " Today: {spent} of {limit}.",
    "digest_today_spent": " Today's budget is spent ({spent} of {limit}): runs wait for tomorrow, or /allow.",
    "digest_failures": "❌ {count} failed:",
    "digest_failure": "- {slug}: {stage} failed{detail} — {ways}",
    "digest_failure_on": "- {slug}: {stage} failed{detail}; now {phase}",
}

DE: dict[str, str] = {
    "digest_quiet": "📰 Seit {since} hat sich nichts bewegt; nichts wartet.",
    "digest_head": "📰 Seit {since}:",
    "digest_moved": "🔀 {moves} auf {cards}.",
    "digest_still": "🔀 Nichts hat sich bewegt.",
    "digest_finished": "✅ fertig: {cards}",
    "digest_started": "▶️ gestartet: {cards}",
    "digest_more": "und {count} weitere",
    "digest_waits": "📥 Wartet auf dich: {count}; das Älteste seit {age}: {item}",
    "digest_no_waits": "📥 Nichts wartet auf dich.",
    "digest_wait_question": "❓ {slug} fragt: {text} — antworte darauf oder {ways}",
    "digest_wait_split_plan": "🧭 {slug}: ihr Aufteilungsplan ({text}) wartet auf deine Freigabe — {ways}",
    "digest_wait_request": "🙋 Anfrage #{id} von {requester}: {text} — {ways}",
    "digest_wait_budget": "💸 {slug}: ihr Budget hält sie an — {ways}",
    "digest_wait_approval": "🔐 {slug}: ihr Agent bittet, einen Befehl auszuführen — {ways}",
    "digest_wait_interrupted": "⏸ {slug}: unterbrochen — {ways}",
    "digest_wait_deploy": "🚀 {slug}: freigegeben, wartet aufs Deployment — {ways}",
    "digest_wait_failed": "❌ {slug}: Schritt {text} fehlgeschlagen — {ways}",
    "digest_wait_quota": "⏳ {slug}: wartet bis {until} auf das Kontingent des Anbieters; nichts zu tun, oder {ways}",
    "digest_wait_routine": "Routine {text} (hat sich pausiert: {ways})",
    "digest_wait_proposal": "💡 {slug}: sein Agent schlägt eine Folgekarte vor, {text} — {ways}",
    "digest_spend": "💸 Ausgegeben: {usd} für {runs}.",
    "digest_no_spend": "💸 Nichts ausgegeben.",
    "digest_today": " Heute: {spent} von {limit}.",
    "digest_today_spent": " Das heutige Budget ist aufgebraucht ({spent} von {limit}): Läufe warten bis morgen, oder /allow.",
    "digest_failures": "❌ {count} fehlgeschlagen:",
    "digest_failure": "- {slug}: {stage} fehlgeschlagen{detail} — {ways}",
    "digest_failure_on": "- {slug}: {stage} fehlgeschlagen{detail}; jetzt {phase}",
}
