"""`/routines`: the routines and their next runs, as chat's /routines says them.

Read from the board (board/routines.py) on each request; a routine's times are shown
in its own zone, as its owner wrote them. Its sentences are kept here, in English and
German: the page has a handful.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from chatbot.board.ports import RoutineReads
from chatbot.board.routines import ACTIVE, RoutineRow
from chatbot.domain.schedules import local_words
from chatbot.web.markup import Safe, scroll_table, tag
from chatbot.web.texts import Texts

#: How many of a routine's newest runs the page names.
LAST = 3
_TEXTS = {
    "en": {
        "title": "Routines",
        "none": "No routines. Make one in chat: /every weekdays 09:00 /research <slug>.",
        "cols": ("#", "command", "when", "next run", "state", "last runs"),
        "config": "from the configuration",
        "done": "done",
        "zones": "The owners' own time zones for the routines they make (/timezone): ",
    },
    "de": {
        "title": "Routinen",
        "none": "Keine Routinen. Im Chat anlegen: /every weekdays 09:00 /research <slug>.",
        "cols": ("#", "Befehl", "wann", "nächster Lauf", "Zustand", "letzte Läufe"),
        "config": "aus der Konfiguration",
        "done": "erledigt",
        "zones": "Die eigenen Zeitzonen der Owner für die Routinen, die sie anlegen (/timezone): ",
    },
}


def title(t: Texts) -> str:
    return cast(str, _TEXTS.get(t.locale, _TEXTS["en"])["title"])


async def page(routines: RoutineReads, t: Texts) -> Safe:
    """The page's main part, read from the board (`board.routines`)."""
    rows = await routines.listed()
    last = {}
    for row in rows:
        runs = await routines.runs(row.id, LAST)
        last[row.id] = [run.outcome for run in runs]
    zones = await routines.owner_zones()
    return routines_main(rows, last, t, zones)


def routines_main(
    rows: Sequence[RoutineRow],
    last: dict[int, list[str]],
    t: Texts,
    zones: dict[str, str] | None = None,
) -> Safe:
    """`last`: a routine's newest run outcomes, newest first; `zones`: the owners' own
    zones (/timezone), owner -> IANA name."""
    words = _TEXTS.get(t.locale, _TEXTS["en"])
    if not rows:
        body = tag('<p class="none">{text}</p>', text=words["none"])
    else:
        lines = [_row(row, last.get(row.id, []), words) for row in rows]
        body = scroll_table("routines", words["cols"], lines)
    shown = "; ".join(f"{owner}: {zone}" for owner, zone in (zones or {}).items())
    owners = (
        tag('<p class="zones" id="owner-zones">{head}{zones}</p>', head=words["zones"], zones=shown)
        if shown
        else Safe("")
    )
    return tag(
        '<h1>{title}</h1><section id="routines">{body}{owners}</section>',
        title=words["title"],
        body=body,
        owners=owners,
    )


def _row(row: RoutineRow, last: list[str], words: dict[str, Any]) -> Safe:
    next_run = (
        local_words(row.next_at, row.timezone) if row.next_at and row.state == ACTIVE else "-"
    )
    state = row.state if row.state != "done" else words["done"]
    if row.why:
        state += f": {row.why}"
    when = f"{row.when_text} ({row.timezone})"
    if row.name:
        when += f" — {words['config']} [{row.name}]"
    return tag(
        '<tr id="routine-{id}"><td>{id}</td><td><code>{command}</code></td><td>{when}</td>'
        '<td class="next">{next}</td><td>{state}</td><td>{last}</td></tr>',
        id=row.id,
        command=row.command,
        when=when,
        next=next_run,
        state=state,
        last=", ".join(last) or "-",
    )
