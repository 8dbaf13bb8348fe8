"""A count with its noun, in English and German: "1 run", "2 runs", "1 Lauf", "2 Läufe".

Chat, the web board, the notices and the shell all show counts; a catalogue sentence
takes the counted noun as one field ("Today: {spent}, {runs}."), so "1 runs" or
"1 cards" cannot be written, and "card(s)" is not needed. A noun is named by its
English singular; each has both forms in both locales (a test holds them complete).
"""

from __future__ import annotations

#: noun -> locale -> (one, many). German forms are those the sentences need (the case
#: after "in", "auf", "hinter" is the same for these nouns, or the sentence avoids it).
NOUNS: dict[str, dict[str, tuple[str, str]]] = {
    "card": {"en": ("card", "cards"), "de": ("Karte", "Karten")},
    "run": {"en": ("run", "runs"), "de": ("Lauf", "Läufe")},
    "job": {"en": ("job", "jobs"), "de": ("Job", "Jobs")},
    "event": {"en": ("event", "events"), "de": ("Ereignis", "Ereignisse")},
    "day": {"en": ("day", "days"), "de": ("Tag", "Tage")},
    # A routine's times missed while every bot was down (chat/routine_clock.py).
    "time": {"en": ("time", "times"), "de": ("Termin", "Termine")},
    "routine": {"en": ("routine", "routines"), "de": ("Routine", "Routinen")},
    "gap": {"en": ("gap", "gaps"), "de": ("Lücke", "Lücken")},
    "child": {"en": ("child", "children"), "de": ("Kind", "Kinder")},
    "move": {"en": ("move", "moves"), "de": ("Schritt", "Schritte")},
    "more line": {"en": ("more line", "more lines"), "de": ("weitere Zeile", "weitere Zeilen")},
    "more character": {
        "en": ("more character", "more characters"),
        "de": ("weiteres Zeichen", "weitere Zeichen"),
    },
    "deprecated key": {
        "en": ("deprecated key", "deprecated keys"),
        "de": ("veralteten Schlüssel", "veraltete Schlüssel"),
    },
    # The shell's words (`chatbot check`, `backup`, `restore`, `run-jobs`).
    "notification": {
        "en": ("notification", "notifications"),
        "de": ("Benachrichtigung", "Benachrichtigungen"),
    },
    "room": {"en": ("room", "rooms"), "de": ("Raum", "Räume")},
    # The web card page's change (web/diff_section.py).
    "file": {"en": ("file", "files"), "de": ("Datei", "Dateien")},
    "line comment": {
        "en": ("line comment", "line comments"),
        "de": ("Zeilenkommentar", "Zeilenkommentare"),
    },
    "worker": {"en": ("worker", "workers"), "de": ("Worker", "Worker")},
    "crypto store file": {
        "en": ("crypto store file", "crypto store files"),
        "de": ("Datei des Krypto-Speichers", "Dateien des Krypto-Speichers"),
    },
}


def counted(count: int, noun: str, locale: str = "en") -> str:
    """`count` and `noun` in the form that count takes (English for an unknown locale)."""
    forms = NOUNS[noun]
    one, many = forms.get(locale, forms["en"])
    return f"{count} {one if count == 1 else many}"
