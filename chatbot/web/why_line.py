"""The card page's "Why it waits" line: what holds the card first, and its way on.

The board decides (board/inbox.why); domain/why_words picks the sentence and its values
as chat's /why does, from the web's own catalogue; every value is escaped.
"""

from __future__ import annotations

from chatbot.board.inbox import Why
from chatbot.domain.why_words import sentence
from chatbot.web.markup import Safe, tag
from chatbot.web.texts import Texts


def said(found: Why, t: Texts) -> str:
    return sentence(found.slug, found.hold, found.ways, t.locale, t)


def why_line(found: Why | None, t: Texts) -> Safe:
    if found is None:
        return Safe("")
    return tag(
        '<p class="why" id="why"><strong>{label}</strong> {text}</p>',
        label=t("why_label"),
        text=said(found, t),
    )
