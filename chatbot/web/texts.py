"""What the web board says, in English and German (`[bot] locale`); both have every key."""

from __future__ import annotations

from chatbot.web import texts_acts, texts_board, texts_files, texts_inbox, texts_why

EN: dict[str, str] = {
    "signin_title": "Sign in",
    "signin_ask": "Sign in to this board as {identity}? The link works once, in one browser.",
    "signin_button": "Sign in",
    "signin_unknown": (
        "This sign-in link is not known: nothing was changed. Write /web to the bot in a "
        "direct chat for a new one."
    ),
    "signin_used": (
        "This sign-in link was used already (a link signs in one browser, once): nothing was "
        "changed. Write /web to the bot in a direct chat for a new one."
    ),
    "signin_expired": (
        "This sign-in link has expired (it is valid for 10 minutes): nothing was changed. "
        "Write /web to the bot in a direct chat for a new one."
    ),
    "signin_revoked": (
        "This sign-in link was ended with /web revoke: nothing was changed. Write /web to the "
        "bot in a direct chat for a new one."
    ),
    "signin_unsaved": (
        "The board cannot save anything right now (its database takes no writes), so you "
        "are not signed in; the link still works once it can. Nothing was changed."
    ),
    "session_ended": (
        "Your web session has ended (/web revoke, or it expired): nothing was changed. Write "
        "/web to the bot in a direct chat to sign in again."
    ),
    "forbidden_read_only": (
        "Only an owner signed in with /web can act here; the board's token only reads. "
        "Nothing was changed."
    ),
    "forbidden_csrf": (
        "This form is not one of your session's (another session's, or none): nothing was "
        "changed. Reload the card and try again."
    ),
    "forbidden_origin": "This came from another site: nothing was changed.",
    "signed_in_as": "Signed in as {identity}.",
    "nav_budget": "Budget",
    "nav_routines": "Routines",
    "nav_cards": "Search",
    "readers": (
        "You are reading with the board's token. Owners act on this page after signing "
        "in: write /web to the bot in a direct chat and open the link it sends."
    ),
    "budget": "What the runs cost",
    "budget_today": "Today: {spent} of the day's budget of {limit} ({runs}).",
    "budget_reached": "The day's budget is spent: new runs wait (/allow in chat lets them start).",
    "budget_today_free": "Today: {spent} ({runs}); there is no day budget.",
    "budget_days": "Per day, last {days}",
    "budget_lanes": "Per lane, last {days}",
    "budget_roles": "Per role with a lane of its own, last {days}",
    "budget_cards": "The costliest cards",
    "col_day": "day",
    "col_runs": "runs",
    "col_budget": "card budget",
    "pipeline_title": "Pipeline {id}: {count}, {cost}",
    "pipeline_open": "Its pipeline {id}: every card and run",
    "pipeline_none": "No card or run belongs to pipeline '{id}'.",
    "synthesis": "Synthesis of the children",
    "synthesis_line": "{path}, {gaps} found",
    "act": "Act",
    "answers": "Answers given",
    "said": "Done from this page",
    "act_start": "Start",
    "act_retry": "Retry",
    "act_fix": "Fix",
    "act_deploy": "Deploy",
    "act_deploy_skip_checks": "Deploy, skipping the checks",
    "act_retry_skip_checks": "Retry, skipping the checks once",
    "act_cancel": "Cancel",
    "act_archive": "Archive",
    "act_answer": "Answer",
    "answer_text": "Your answer",
    "act_approve": "Allow once",
    "act_deny": "Deny",
    "deny_reason": "Reason (the agent reads it)",
    "act_steer": "Steer",
    "steer_text": "Tell the running agent",
    "act_accept": "Accept",
    "act_decline": "Decline",
    "request_line": "Request #{id} by {requester}: /{command} {argument}",
    "title": "Intent board",
    "nav_board": "Board",
    "nav_runs": "Runs",
    "group_planned": "Planned",
    "group_working": "Working",
    "group_waiting": "Waiting for you",
    "group_review": "Review",
    "group_ready": "Ready",
    "group_done": "Done",
    "group_archived": "Archived",
    "all_cards": "All, and search",
    "cards_title": "Cards",
    "search_label": "Slug or title",
    "search_group": "Group",
    "search_any": "every group",
    "search_button": "Search",
    "cards_of": "{group}: {n}",
    "no_match": "No card's slug or title holds “{q}”.",
    "no_cards": "No cards here.",
    "newer": "← newer",
    "older": "older →",
    "query_too_long": (
        "The search text is {n} characters long; at most {limit} are taken. "
        "Search for a shorter part of the slug or title."
    ),
    "bad_group": "There is no group '{group}'; use one of: {groups}.",
    "bad_cursor": "This page address is damaged ({which}); start again from the first page.",
    "cards_total": "{n}",
    "column_empty": "nothing here",
    "live_on": "live",
    "live_off": "reconnecting…",
    "job_running": "running {age}",
    "job_queued": "queued {age}",
    "moved_since": "since {age}",
    "question": "Question",
    "lane": "lane {lane}",
    "kind_phase": "{kind} · {phase}",
    "intent": "Intent",
    "criteria": "Acceptance criteria",
    "pipeline": "pipeline {id}",
    "conversation": "Intake dialogue",
    "intent_missing": "The intent file {path} is not in the repository.",
    "cut": "Shown up to {n} characters; the whole text is {path} in the repository.",
    "failure": "Failed at {stage}: {detail}",
    "checks": "Checks of {commit}: {verdict} in {seconds} s ({command})",
    "checks_output": "The end of their output",
    "parent": "Part of",
    "children": "Split into",
    "blocked_by": "Waits for",
    "change": "Change",
    "diff_summary": "{files}, +{added} -{removed}, up to {commit}.",
    "diff_download": "Download the whole patch",
    "comment_file": "Comment on",
    "comment_from": "lines",
    "comment_to": "to",
    "comment_hint": "What should change here? The fixer (or the running agent) gets it.",
    "comment_send": "Comment",
    "comments": "Comments on the change",
    "comment_open": "open",
    "comment_sent": "with the agent",
    "comment_answered": "answered in {commit}",
    "diff_partial": "Only the first part of the change is shown; the whole patch is downloadable.",
    "diff_added": "new file",
    "diff_deleted": "deleted",
    "diff_renamed": "renamed from {old}",
    "diff_copied": "copied from {old}",
    "diff_mode": "mode {old} → {new}",
    "diff_binary": "binary",
    "diff_no_lines": "No lines (a binary file, or only its name or mode changed).",
    "diff_lines_left": "… {n} in the download",
    "diff_line_cut": " … {n} cut",
    "change_missing": "The change cannot be shown: {why}",
    "no_patch": "{slug} has no commit to download.",
    "reviews": "Review",
    "review_of": "{decision} for {commit}",
    "research": "Research report",
    "research_missing": "The research report {path} is not in the repository.",
    "approvals": "What the agent asked",
    "approval_head": "{tool}: {state} ({who}, asked {at})",
    "approval_cwd": "in {cwd}",
    "approval_open": "waiting for an owner",
    "approval_allowed": "allowed once",
    "approval_denied": "denied",
    "approval_timed_out": "denied, nobody answered in time",
    "approval_closed": "closed, its run had ended",
    "session": "Agent session",
    "session_line": "Session {session} ({role} on {runtime})",
    "worktree": "Worktree: {path}",
    "hand_over_none": "The {runtime} engine cannot hand its session to a terminal.",
    "history": "History",
    "runs": "Runs",
    "no_runs": "No model run yet.",
    "col_when": "when",
    "col_role": "role",
    "col_runtime": "runtime",
    "col_model": "model",
    "col_duration": "duration",
    "col_tokens": "tokens in / cached / out",
    "col_cost": "cost",
    "col_outcome": "outcome",
    "col_step": "#",
    "col_move": "move",
    "col_action": "action",
    "col_actor": "by",
    "col_reason": "why",
    "col_job": "job",
    "col_card": "card",
    "col_kind": "kind",
    "col_lane": "lane",
    "col_state": "state",
    "col_for": "for",
    "col_attempts": "attempt",
    "col_host": "host",
    "jobs": "Queued and running",
    "no_jobs": "Nothing is queued or running.",
    "workers": "Workers seen in the last {hours} h",
    "no_workers": (
        "No worker seen: queued jobs wait until one runs (chatbot run, or chatbot worker "
        "on any host with the same database)."
    ),
    "col_lanes": "lanes",
    "col_running": "running",
    "col_seen": "last seen",
    "col_up": "up",
    "worker_alive": "alive",
    "worker_gone": "gone",
    "chart": "Runs and cost per day, last {days}",
    "chart_label": "{runs}, cost {cost} on {day}",
    "chart_runs": "runs",
    "chart_cost": "cost (USD)",
    "unknown_card": "There is no card '{slug}'.",
    "back": "Back to the board",
    "unauthorized": (
        "This board needs a sign-in. Owners: write /web to the bot in a direct chat and "
        "open the link it sends. Readers with the board's token (its [web] token_file): "
        "open /?token=<token> once (a cookie keeps you in), or send "
        "Authorization: Bearer <token>."
    ),
    "not_found": "Nothing here.",
    "busy": "The board is busy; try again in a few seconds.",
    "busy_pages": "Too many pages follow the board right now; this one tries again by itself.",
    "u_s": "{n} s",
    "u_min": "{n} min",
    "u_h": "{n} h",
    "u_d": "{n} d",
}

DE: dict[str, str] = {
    "signin_title": "Anmelden",
    "signin_ask": "Als {identity} am Board anmelden? Der Link gilt einmal, in einem Browser.",
    "signin_button": "Anmelden",
    "signin_unknown": (
        "Dieser Anmeldelink ist unbekannt: nichts wurde geändert. Schreib dem Bot /web im "
        "Direktchat für einen neuen."
    ),
    "signin_used": (
        "Dieser Anmeldelink wurde schon benutzt (ein Link meldet einen Browser an, einmal): "
        "nichts wurde geändert. Schreib dem Bot /web im Direktchat für einen neuen."
    ),
    "signin_expired": (
        "Dieser Anmeldelink ist abgelaufen (er gilt 10 Minuten): nichts wurde geändert. "
        "Schreib dem Bot /web im Direktchat für einen neuen."
    ),
    "signin_revoked": (
        "Dieser Anmeldelink wurde mit /web revoke beendet: nichts wurde geändert. Schreib dem "
        "Bot /web im Direktchat für einen neuen."
    ),
    "signin_unsaved": (
        "Das Board kann gerade nichts speichern (seine Datenbank nimmt nichts an), darum "
        "bist du nicht angemeldet; der Link gilt weiter, sobald es wieder geht. Nichts "
        "wurde geändert."
    ),
    "session_ended": (
        "Deine Web-Sitzung ist beendet (/web revoke, oder abgelaufen): nichts wurde geändert. "
        "Schreib dem Bot /web im Direktchat, um dich neu anzumelden."
    ),
    "forbidden_read_only": (
        "Nur ein mit /web angemeldeter Owner kann hier handeln; das Token des Boards liest "
        "nur. Nichts wurde geändert."
    ),
    "forbidden_csrf": (
        "Dieses Formular gehört nicht zu deiner Sitzung (zu einer anderen, oder zu keiner): "
        "nichts wurde geändert. Lade die Karte neu und versuche es noch einmal."
    ),
    "forbidden_origin": "Das kam von einer anderen Website: nichts wurde geändert.",
    "signed_in_as": "Angemeldet als {identity}.",
    "nav_budget": "Budget",
    "nav_routines": "Routinen",
    "nav_cards": "Suche",
    "readers": (
        "Du liest mit dem Token des Boards. Owner handeln auf dieser Seite nach der "
        "Anmeldung: schreib dem Bot /web im Direktchat und öffne den Link, den er schickt."
    ),
    "budget": "Was die Läufe kosten",
    "budget_today": "Heute: {spent} vom Tagesbudget {limit} ({runs}).",
    "budget_reached": "Das Tagesbudget ist aufgebraucht: neue Läufe warten (/allow startet sie).",
    "budget_today_free": "Heute: {spent} ({runs}); es gibt kein Tagesbudget.",
    "budget_days": "Pro Tag, letzte {days}",
    "budget_lanes": "Pro Spur, letzte {days}",
    "budget_roles": "Pro Rolle mit eigener Spur, letzte {days}",
    "budget_cards": "Die teuersten Karten",
    "col_day": "Tag",
    "col_runs": "Läufe",
    "col_budget": "Kartenbudget",
    "pipeline_title": "Pipeline {id}: {count}, {cost}",
    "pipeline_open": "Seine Pipeline {id}: alle Karten und Läufe",
    "pipeline_none": "Zur Pipeline '{id}' gehört keine Karte und kein Lauf.",
    "synthesis": "Synthese der Kinder",
    "synthesis_line": "{path}, {gaps} gefunden",
    "act": "Handeln",
    "answers": "Gegebene Antworten",
    "said": "Von dieser Seite aus getan",
    "act_start": "Starten",
    "act_retry": "Wiederholen",
    "act_fix": "Reparieren",
    "act_deploy": "Ausrollen",
    "act_deploy_skip_checks": "Ausrollen ohne bestandene Prüfungen",
    "act_retry_skip_checks": "Wiederholen, Prüfungen einmal auslassen",
    "act_cancel": "Abbrechen",
    "act_archive": "Archivieren",
    "act_answer": "Antworten",
    "answer_text": "Deine Antwort",
    "act_approve": "Einmal erlauben",
    "act_deny": "Ablehnen",
    "deny_reason": "Grund (der Agent liest ihn)",
    "act_steer": "Lenken",
    "steer_text": "Dem laufenden Agenten sagen",
    "act_accept": "Annehmen",
    "act_decline": "Ablehnen",
    "request_line": "Anfrage #{id} von {requester}: /{command} {argument}",
    "title": "Intent-Board",
    "nav_board": "Board",
    "nav_runs": "Läufe",
    "group_planned": "Geplant",
    "group_working": "In Arbeit",
    "group_waiting": "Wartet auf dich",
    "group_review": "Review",
    "group_ready": "Bereit",
    "group_done": "Erledigt",
    "group_archived": "Archiviert",
    "all_cards": "Alle, und suchen",
    "cards_title": "Karten",
    "search_label": "Slug oder Titel",
    "search_group": "Gruppe",
    "search_any": "alle Gruppen",
    "search_button": "Suchen",
    "cards_of": "{group}: {n}",
    "no_match": "Kein Slug und kein Titel enthält „{q}“.",
    "no_cards": "Hier sind keine Karten.",
    "newer": "← neuere",
    "older": "ältere →",
    "query_too_long": (
        "Der Suchtext ist {n} Zeichen lang; höchstens {limit} werden genommen. "
        "Suche nach einem kürzeren Teil von Slug oder Titel."
    ),
    "bad_group": "Es gibt keine Gruppe '{group}'; nimm eine von: {groups}.",
    "bad_cursor": "Diese Seitenadresse ist beschädigt ({which}); fang auf der ersten Seite neu an.",
    "cards_total": "{n}",
    "column_empty": "nichts hier",
    "live_on": "live",
    "live_off": "verbinde neu…",
    "job_running": "läuft seit {age}",
    "job_queued": "wartet seit {age}",
    "moved_since": "seit {age}",
    "question": "Frage",
    "lane": "Spur {lane}",
    "kind_phase": "{kind} · {phase}",
    "intent": "Absicht",
    "criteria": "Abnahmekriterien",
    "pipeline": "Pipeline {id}",
    "conversation": "Aufnahmedialog",
    "intent_missing": "Die Intent-Datei {path} ist nicht im Repository.",
    "cut": "Gezeigt bis {n} Zeichen; der ganze Text ist {path} im Repository.",
    "failure": "Fehlgeschlagen bei {stage}: {detail}",
    "checks": "Prüfungen von {commit}: {verdict} in {seconds} s ({command})",
    "checks_output": "Das Ende ihrer Ausgabe",
    "parent": "Teil von",
    "children": "Aufgeteilt in",
    "blocked_by": "Wartet auf",
    "change": "Änderung",
    "diff_summary": "{files}, +{added} -{removed}, bis {commit}.",
    "diff_download": "Den ganzen Patch herunterladen",
    "comment_file": "Kommentar zu",
    "comment_from": "Zeilen",
    "comment_to": "bis",
    "comment_hint": "Was soll sich hier ändern? Der Fixer (oder der laufende Agent) bekommt es.",
    "comment_send": "Kommentieren",
    "comments": "Kommentare zur Änderung",
    "comment_open": "offen",
    "comment_sent": "beim Agenten",
    "comment_answered": "beantwortet in {commit}",
    "diff_partial": "Hier steht nur der erste Teil der Änderung; der ganze Patch ist im Download.",
    "diff_added": "neue Datei",
    "diff_deleted": "gelöscht",
    "diff_renamed": "umbenannt von {old}",
    "diff_copied": "kopiert von {old}",
    "diff_mode": "Modus {old} → {new}",
    "diff_binary": "binär",
    "diff_no_lines": "Keine Zeilen (eine Binärdatei, oder nur Name oder Modus geändert).",
    "diff_lines_left": "… {n} im Download",
    "diff_line_cut": " … {n} abgeschnitten",
    "change_missing": "Die Änderung kann nicht gezeigt werden: {why}",
    "no_patch": "{slug} hat keinen Commit zum Herunterladen.",
    "reviews": "Review",
    "review_of": "{decision} für {commit}",
    "research": "Recherchebericht",
    "research_missing": "Der Recherchebericht {path} ist nicht im Repository.",
    "approvals": "Was der Agent gefragt hat",
    "approval_head": "{tool}: {state} ({who}, gefragt {at})",
    "approval_cwd": "in {cwd}",
    "approval_open": "wartet auf einen Owner",
    "approval_allowed": "einmal erlaubt",
    "approval_denied": "abgelehnt",
    "approval_timed_out": "abgelehnt, niemand antwortete rechtzeitig",
    "approval_closed": "geschlossen, der Lauf war zu Ende",
    "session": "Sitzung des Agenten",
    "session_line": "Sitzung {session} ({role} auf {runtime})",
    "worktree": "Arbeitsverzeichnis: {path}",
    "hand_over_none": "Die Engine {runtime} kann ihre Sitzung nicht an ein Terminal übergeben.",
    "history": "Verlauf",
    "runs": "Läufe",
    "no_runs": "Noch kein Modelllauf.",
    "col_when": "wann",
    "col_role": "Rolle",
    "col_runtime": "Laufzeit",
    "col_model": "Modell",
    "col_duration": "Dauer",
    "col_tokens": "Tokens ein / Cache / aus",
    "col_cost": "Kosten",
    "col_outcome": "Ergebnis",
    "col_step": "#",
    "col_move": "Schritt",
    "col_action": "Aktion",
    "col_actor": "von",
    "col_reason": "warum",
    "col_job": "Auftrag",
    "col_card": "Karte",
    "col_kind": "Art",
    "col_lane": "Spur",
    "col_state": "Zustand",
    "col_for": "seit",
    "col_attempts": "Versuch",
    "col_host": "Host",
    "jobs": "Wartend und laufend",
    "no_jobs": "Nichts wartet oder läuft.",
    "workers": "Worker der letzten {hours} Std.",
    "no_workers": (
        "Kein Worker gesehen: wartende Aufträge warten, bis einer läuft (chatbot run, oder "
        "chatbot worker auf einem beliebigen Host mit derselben Datenbank)."
    ),
    "col_lanes": "Spuren",
    "col_running": "laufend",
    "col_seen": "zuletzt gesehen",
    "col_up": "läuft seit",
    "worker_alive": "aktiv",
    "worker_gone": "weg",
    "chart": "Läufe und Kosten pro Tag, letzte {days}",
    "chart_label": "{runs}, Kosten {cost} am {day}",
    "chart_runs": "Läufe",
    "chart_cost": "Kosten (USD)",
    "unknown_card": "Es gibt keine Karte '{slug}'.",
    "back": "Zurück zum Board",
    "unauthorized": (
        "Dieses Board braucht eine Anmeldung. Owner: schreib dem Bot /web im Direktchat und "
        "öffne den Link, den er schickt. Leser mit dem Token des Boards (token_file im "
        "Abschnitt [web]): öffne einmal /?token=<Token> (ein Cookie hält dich angemeldet), "
        "oder sende Authorization: Bearer <Token>."
    ),
    "not_found": "Hier ist nichts.",
    "busy": "Das Board ist gerade ausgelastet; versuche es in ein paar Sekunden wieder.",
    "busy_pages": (
        "Gerade verfolgen zu viele Seiten das Board; diese versucht es gleich von selbst wieder."
    ),
    "u_s": "{n} s",
    "u_min": "{n} Min.",
    "u_h": "{n} Std.",
    "u_d": "{n} T.",
}

EN |= texts_why.EN | texts_acts.EN | texts_inbox.EN | texts_board.EN | texts_files.EN
DE |= texts_why.DE | texts_acts.DE | texts_inbox.DE | texts_board.DE | texts_files.DE
CATALOGUES = {"en": EN, "de": DE}


class Texts:
    def __init__(self, locale: str):
        self.locale = locale
        self._texts = CATALOGUES.get(locale, EN)
        self.units = {unit: self._texts[f"u_{unit}"] for unit in ("s", "min", "h", "d")}

    def __call__(self, key: str, **values: object) -> str:
        return self._texts[key].format(**values)
