"""What holds a card, said in English and German: the sentences of /why.

Chat (/why, `chatbot why`) and the card's web page say them alike, and may not import
each other, so the one catalogue is here; `why_words.sentence` fills it in.
"""

# Sentences read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

EN: dict[str, str] = {
    "why_ways": " Way on: {ways}.",
    "why_done": "{slug} is {phase}: nothing holds it, it is finished.",
    "why_budget_card": "{slug} is held by its own budget: it is spent, so its step did not start.",
    "why_interrupted": "{slug} waits for you: its run was interrupted and its session is kept.",
    "why_approval": "{slug} waits for your approval: its agent asked to run something at {since}.",
    "why_split_plan": "{slug} waits for your approval of its split plan ({count}: {cards}), posted at {since}; nothing is created before it.",
    "why_question": "{slug} waits for your answer to its question, open since {since}.",
    "why_failed": "{slug} is held by its failed {stage} stage.",
    "why_children": "{slug} is a split waiting for its children: {cards}.",
    "why_blocked": "{slug} is blocked by {cards}; it starts when they are done.",
    "why_lease_lost": "{slug}'s {role} job #{job} belongs to worker {worker} on {host}, which stopped heartbeating (last seen {last_seen}); {taken}.",
    "why_taken_live": "a live worker takes it over at its next round (the lease ended {ends})",
    "why_taken_none": "no live worker serves lane {lane} to take it over: start one (`chatbot worker`)",
    "why_fails_live": "its result is unknown, so a live worker's next round marks it failed (the lease ended {ends})",
    "why_fails_none": "its result is unknown; no live worker is left to mark it failed: start one (`chatbot worker`)",
    "why_running": "Nothing holds {slug}: its {role} runs on {host} since {since}.",
    "why_day_budget": "{slug}'s {role} job waits: today's budget is spent.",
    "why_quota": "{slug}'s {role} job waits for the provider's quota or rate limit, not for a fault of the work: it runs again by itself at {until} ({detail}).",
    "why_no_worker": "{slug}'s {role} job waits: no live worker serves lane {lane} (last seen: {host} at {last_seen}). Start one: `chatbot worker`.",
    "why_no_worker_never": "{slug}'s {role} job waits: no worker has ever served lane {lane}. Start one: `chatbot worker`.",
    "why_lane": "{slug}'s {role} job waits for a slot in lane {lane}, behind {count}: {cards}.",
    "why_queued": "{slug}'s {role} job is queued in lane {lane}; a worker takes it at its next round.",
    "why_deploy": "{slug} is approved and waits for you to deploy it.",
    "why_start": "{slug} is {phase} and waits for you to start it.",
    "why_idle": "{slug} is {phase}; nothing holds it.",
}

DE: dict[str, str] = {
    "why_ways": " Weiter mit: {ways}.",
    "why_done": "{slug} ist {phase}: nichts hält sie auf, sie ist fertig.",
    "why_budget_card": "{slug} hält ihr eigenes Budget auf: es ist aufgebraucht, ihr Schritt startete nicht.",
    "why_interrupted": "{slug} wartet auf dich: ihr Lauf wurde unterbrochen, die Sitzung bleibt.",
    "why_approval": "{slug} wartet auf deine Freigabe: ihr Agent bat um {since}, etwas auszuführen.",
    "why_split_plan": "{slug} wartet auf deine Freigabe ihres Aufteilungsplans ({count}: {cards}), gestellt um {since}; vorher wird nichts angelegt.",
    "why_question": "{slug} wartet auf deine Antwort auf ihre Frage, offen seit {since}.",
    "why_failed": "{slug} hält ihr fehlgeschlagener Schritt {stage} auf.",
    "why_children": "{slug} ist aufgeteilt und wartet auf ihre Kinder: {cards}.",
    "why_blocked": "{slug} ist blockiert durch {cards}; sie startet, wenn diese fertig sind.",
    "why_lease_lost": "Job #{job} ({role}) von {slug} gehört Worker {worker} auf {host}, der keinen Herzschlag mehr sendet (zuletzt {last_seen}); {taken}.",
    "why_taken_live": "ein lebender Worker übernimmt ihn in seiner nächsten Runde (der Lease endete {ends})",
    "why_taken_none": "kein lebender Worker bedient Lane {lane}, um ihn zu übernehmen: starte einen (`chatbot worker`)",
    "why_fails_live": "sein Ergebnis ist unbekannt, daher markiert ihn ein lebender Worker in seiner nächsten Runde als fehlgeschlagen (der Lease endete {ends})",
    "why_fails_none": "sein Ergebnis ist unbekannt; kein lebender Worker ist da, der ihn als fehlgeschlagen markiert: starte einen (`chatbot worker`)",
    "why_running": "Nichts hält {slug} auf: ihr {role} läuft auf {host} seit {since}.",
    "why_day_budget": "Der {role}-Job von {slug} wartet: das heutige Budget ist aufgebraucht.",
    "why_quota": "Der {role}-Job von {slug} wartet auf das Kontingent oder Ratenlimit des Anbieters, nicht auf einen Fehler der Arbeit: er läuft um {until} von selbst wieder ({detail}).",
    "why_no_worker": "Der {role}-Job von {slug} wartet: kein lebender Worker bedient Lane {lane} (zuletzt: {host} um {last_seen}). Starte einen: `chatbot worker`.",
    "why_no_worker_never": "Der {role}-Job von {slug} wartet: noch nie hat ein Worker Lane {lane} bedient. Starte einen: `chatbot worker`.",
    "why_lane": "Der {role}-Job von {slug} wartet auf einen Platz in Lane {lane}, hinter {count}: {cards}.",
    "why_queued": "Der {role}-Job von {slug} steht in Lane {lane} an; ein Worker nimmt ihn in seiner nächsten Runde.",
    "why_deploy": "{slug} ist freigegeben und wartet darauf, dass du sie deployst.",
    "why_start": "{slug} ist {phase} und wartet darauf, dass du sie startest.",
    "why_idle": "{slug} ist {phase}; nichts hält sie auf.",
}
