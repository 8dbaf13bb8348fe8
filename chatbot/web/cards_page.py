"""`/cards`: every card, a page at a time, searched by slug and title on the server.

A plain GET form, so it works without JavaScript; the pages go on from a cursor
(`after` / `before`) that the links carry, so page 2,000 costs what page 1 does.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from chatbot.board.card_lists import MAX_QUERY, CardList, Cursor
from chatbot.domain.counted import counted
from chatbot.web.groups import Group
from chatbot.web.markup import Safe, join, tag
from chatbot.web.pages import CardItems
from chatbot.web.texts import Texts

PER_PAGE = 50


class BadQuery(ValueError):
    """The address asks for something that cannot be; the message says what to do."""


@dataclass(frozen=True)
class CardsQuery:
    text: str = ""
    group: Group | None = None
    after: Cursor | None = None
    before: Cursor | None = None

    def link(self, **cursor: Cursor) -> str:
        params = {"q": self.text, "group": self.group.value if self.group else ""}
        params = {key: value for key, value in params.items() if value}
        params.update({key: value.token() for key, value in cursor.items()})
        return "/cards?" + urlencode(params) if params else "/cards"


def parse(query: dict[str, str], t: Texts) -> CardsQuery:
    """The address's q, group, after and before; BadQuery in the reader's words."""
    # No text holds a NUL, and PostgreSQL refuses one in a parameter.
    text = query.get("q", "").replace("\x00", "").strip()
    if len(text) > MAX_QUERY:
        raise BadQuery(t("query_too_long", n=len(text), limit=MAX_QUERY))
    name = query.get("group", "")
    group = None
    if name:
        try:
            group = Group(name)
        except ValueError:
            raise BadQuery(
                t("bad_group", group=name[:40], groups=", ".join(g.value for g in Group))
            ) from None
    cursors: dict[str, Cursor | None] = {}
    for key in ("after", "before"):
        value = query.get(key)
        cursors[key] = Cursor.parse(value) if value else None
        if value and cursors[key] is None:
            raise BadQuery(t("bad_cursor", which=key))
    return CardsQuery(text, group, cursors["after"], cursors["before"])


def search_form(query: CardsQuery, t: Texts) -> Safe:
    options = [tag('<option value="">{name}</option>', name=t("search_any"))]
    for group in Group:
        chosen = Safe(" selected" if group is query.group else "")
        options.append(
            tag(
                '<option value="{value}"{chosen}>{name}</option>',
                value=group.value,
                chosen=chosen,
                name=t(f"group_{group.value}"),
            )
        )
    return tag(
        '<form class="search" method="get" action="/cards" role="search">'
        '<label>{label} <input type="search" name="q" value="{q}" maxlength="{limit}"></label> '
        '<label>{group_label} <select name="group">{options}</select></label> '
        "<button>{button}</button></form>",
        label=t("search_label"),
        q=query.text,
        limit=MAX_QUERY,
        group_label=t("search_group"),
        options=join(options),
        button=t("search_button"),
    )


def cards_main(query: CardsQuery, listing: CardList, count: int | None, items: CardItems) -> Safe:
    """The form, one page of cards, and links to the newer and older pages."""
    t = items.t
    if query.group is not None and count is not None:
        found = counted(count, "card", t.locale)
        heading = t("cards_of", group=t(f"group_{query.group.value}"), n=found)
    else:
        heading = t("cards_title")
    if listing.cards:
        body = tag(
            '<ul class="cards listing" id="results">{items}</ul>',
            items=join(items(card) for card in listing.cards),
        )
    else:
        empty = t("no_match", q=query.text) if query.text else t("no_cards")
        body = tag('<p class="none" id="results-none">{text}</p>', text=empty)
    links = []
    if listing.newer is not None:
        links.append(
            tag(
                '<a rel="prev" href="{h}">{text}</a>',
                h=query.link(before=listing.newer),
                text=t("newer"),
            )
        )
    if listing.older is not None:
        links.append(
            tag(
                '<a rel="next" href="{h}">{text}</a>',
                h=query.link(after=listing.older),
                text=t("older"),
            )
        )
    return tag(
        '<h1>{heading}</h1>{form}{body}<nav class="pages">{links}</nav>',
        heading=heading,
        form=search_form(query, t),
        body=body,
        links=join(links, " "),
    )
