"""The sentences of /web (sign-in links and sessions of the web board) and of actions
taken from the page, in English and German (merged into texts.py)."""

from __future__ import annotations

EN: dict[str, str] = {
    "cmd_web": "a sign-in link for the web board (direct chat); sessions lists them, revoke [n|all] ends them",
    "web_direct_only": "Sign-in links and sessions are for a direct chat only: write /web to me directly. Nothing was sent here.",
    "web_no_board": "This bot has no web board: add a [web] section to its configuration.",
    "web_no_url": "The sign-in link cannot be made: set [web] public_url in the bot's configuration to the address browsers reach the board at (like https://board.example.org/), then restart the bot.",
    "web_link": 'Your sign-in link to the web board, for one use within {minutes} minutes:\n{url}\nOpen it and press "Sign in". /web revoke ends it unused.',
    "web_sessions_none": "You have no web session. /web makes a sign-in link.",
    "web_sessions": "Your web sessions:\n{lines}\n/web revoke <n> ends one, /web revoke ends them all; /web sessions all lists every owner's.",
    "web_session_line": "#{id}: signed in {created}, last used {used}, {agent}",
    "web_revoked": "Ended your web sessions and unused sign-in links: {count}.",
    "web_revoked_one": "Ended web session #{id}.",
    "web_revoke_unknown": "There is no live web session #{id}; /web sessions all lists every owner's.",
    "web_number_only_revoke": "Only /web revoke takes a number: /web revoke <n>.",
    "web_sessions_all_none": "No owner has a web session. /web makes a sign-in link.",
    "web_sessions_all": "Every owner's web sessions:\n{lines}\n/web revoke <n> ends one, /web revoke all ends every one.",
    "web_session_line_all": "#{id}: {identity}, signed in {created}, last used {used}, {agent}",
    "web_revoked_all": "Ended every owner's web sessions and unused sign-in links: {count}.",
    "web_revoked_other": "Ended web session #{id} of {identity}.",
    "web_which": "/web takes: nothing (a sign-in link), sessions [all], or revoke [<n>|all]. Nothing was changed.",
    "web_owners_only": "Only an owner acts from the web board; nothing was changed.",
    "web_unknown_action": "The web board cannot do '{action}'; nothing was changed.",
    "web_no_question": "{slug} has no open question to answer.",
    "web_said": "🌐 {who} via web: {text}",
}

DE: dict[str, str] = {
    "cmd_web": "ein Anmelde-Link fürs Web-Board (Direktchat); sessions listet, revoke [n|all] beendet Sitzungen",
    "web_direct_only": "Anmeldelinks und Sitzungen gibt es nur im Direktchat: schreib mir /web direkt. Hier wurde nichts gesendet.",
    "web_no_board": "Dieser Bot hat kein Web-Board: ergänze einen Abschnitt [web] in seiner Konfiguration.",
    "web_no_url": "Der Anmeldelink kann nicht erstellt werden: setze [web] public_url in der Konfiguration des Bots auf die Adresse, unter der Browser das Board erreichen (etwa https://board.example.org/), und starte den Bot neu.",
    "web_link": "Dein Anmeldelink zum Web-Board, einmal nutzbar innerhalb von {minutes} Minuten:\n{url}\nÖffne ihn und drücke „Anmelden“. /web revoke beendet ihn ungenutzt.",
    "web_sessions_none": "Du hast keine Web-Sitzung. /web erstellt einen Anmeldelink.",
    "web_sessions": "Deine Web-Sitzungen:\n{lines}\n/web revoke <n> beendet eine, /web revoke beendet alle; /web sessions all listet die aller Owner.",
    "web_session_line": "#{id}: angemeldet {created}, zuletzt benutzt {used}, {agent}",
    "web_revoked": "Deine Web-Sitzungen und ungenutzten Anmeldelinks beendet: {count}.",
    "web_revoked_one": "Web-Sitzung #{id} beendet.",
    "web_revoke_unknown": "Es gibt keine laufende Web-Sitzung #{id}; /web sessions all listet die aller Owner.",
    "web_number_only_revoke": "Nur /web revoke nimmt eine Nummer: /web revoke <n>.",
    "web_sessions_all_none": "Kein Owner hat eine Web-Sitzung. /web erstellt einen Anmeldelink.",
    "web_sessions_all": "Web-Sitzungen aller Owner:\n{lines}\n/web revoke <n> beendet eine, /web revoke all beendet alle.",
    "web_session_line_all": "#{id}: {identity}, angemeldet {created}, zuletzt benutzt {used}, {agent}",
    "web_revoked_all": "Die Web-Sitzungen und ungenutzten Anmeldelinks aller Owner beendet: {count}.",
    "web_revoked_other": "Web-Sitzung #{id} von {identity} beendet.",
    "web_which": "/web nimmt: nichts (ein Anmeldelink), sessions [all] oder revoke [<n>|all]. Nichts wurde geändert.",
    "web_owners_only": "Nur ein Owner handelt vom Web-Board aus; nichts wurde geändert.",
    "web_unknown_action": "Das Web-Board kann '{action}' nicht; nichts wurde geändert.",
    "web_no_question": "{slug} hat keine offene Frage.",
    "web_said": "🌐 {who} über das Web-Board: {text}",
}
