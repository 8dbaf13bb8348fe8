"""A signed-in owner's inbox on the board page: what /inbox lists in chat, with buttons.

The items are exactly board/inbox.py's, oldest first, each one line; the page reads
only the SHOWN it shows and the count (`inbox_page`), never every item. Its buttons come
from the item's own ways (the commands chat names to resolve it), so the page and chat
never disagree on what resolves what: a command the page can run is a button of the
page's one owner form (`#owner-act`, board_acts.py) with `formaction`; a command that
needs words (an answer, a reason, a steer) is a link to the card's page; what the page
cannot run (/allow) is shown as the command to write in chat. A request's buttons post
to its own route (/request/<id>/act): a request need not have a card yet.

It lives outside the live part of the page and is read when the page is: a reload
shows the latest.
"""

from __future__ import annotations

from collections.abc import Sequence

from chatbot.board.inbox import InboxItem, InboxKind
from chatbot.notify.format import cut
from chatbot.web.board_acts import FORM
from chatbot.web.markup import Safe, clock, esc, join, since, tag
from chatbot.web.texts import Texts

# More than this many lines makes the page long and slow on a phone; chat has the rest.
SHOWN = 50
# How much of an agent's command or a request one line shows; the card page has all.
LINE_CHARS = 200
# The ways the page runs with one button (chat/web_acts.py runs them as the command).
BUTTONS = frozenset({"start", "confirm", "retry", "fix", "deploy", "cancel", "archive", "approve"})
ON_REQUEST = frozenset({"accept", "decline"})
# The ways that need words, and the label of the link to the card page's form.
WORDS = {"answer": "act_answer_words", "deny": "act_deny_reason", "steer": "act_steer_page"}


def _one_line(text: str) -> str:
    return cut(" ".join(text.split()), LINE_CHARS, " …")


def _button(formaction: str, action: str, label: str, css: str = "") -> Safe:
    return tag(
        '<button{css} form="{form}" formaction="{to}" name="action" value="{action}">'
        "{label}</button>",
        css=Safe(f' class="{css}"' if css else ""),
        form=FORM,
        to=formaction,
        action=action,
        label=label,
    )


def _acts(item: InboxItem, t: Texts) -> Safe:
    slug = item.slug if item.slug and item.slug != "-" else None
    parts: list[Safe] = []
    if item.kind == InboxKind.QUESTION and slug is not None:
        # The option rides in the address: a button sends one name and value.
        which = f"&question={item.question_id}" if item.question_id else ""
        parts.extend(
            _button(f"/card/{slug}/act?option={number}{which}", "answer", option, "opt")
            for number, option in enumerate(item.options, start=1)
        )
    for way in item.ways:
        command, _, rest = way.partition(" ")
        action = command.lstrip("/")
        if not command.startswith("/"):
            continue  # a reaction (👍): the button next to it says the same
        if action in ON_REQUEST and item.request_id is not None:
            to = f"/request/{item.request_id}/act"
            parts.append(_button(to, action, t(f"act_{action}")))
        elif action in WORDS and slug is not None:
            parts.append(tag('<a href="/card/{slug}#act">{l}</a>', slug=slug, l=t(WORDS[action])))
        elif action in BUTTONS and slug is not None and rest == slug:
            parts.append(_button(f"/card/{slug}/act", action, t(f"act_{action}")))
        else:
            parts.append(
                tag(
                    '<span class="chat">{l} <code>{way}</code></span>',
                    l=t("inbox_in_chat"),
                    way=way,
                )
            )
    return tag('<span class="acts">{parts}</span>', parts=join(parts))


def _words(item: InboxItem, t: Texts) -> Safe:
    """What waits, in words; a request's or an agent's command as inert code."""
    text = _one_line(item.text)
    if item.kind == InboxKind.REQUEST:
        head = t("inbox_request", id=item.request_id, requester=item.requester)
        return tag("{head} <code>{text}</code>", head=head, text=text)
    if item.kind == InboxKind.APPROVAL:
        return tag("{head} <code>{text}</code>", head=t("inbox_approval"), text=text)
    until = clock(item.until) if item.until is not None else "-"
    return esc(t(f"inbox_{item.kind}", text=text, until=until))


def _line(item: InboxItem, t: Texts, now: float | None) -> Safe:
    slug = ""
    if item.slug:
        slug = tag('<a class="slug" href="/card/{s}">{s}</a> ', s=item.slug)
    return tag(
        '<li class="inbox-{kind}">{slug}<span class="what">{words}</span> '
        '<span class="meta">{since}</span>{acts}</li>',
        kind=item.kind,
        slug=Safe(slug),
        words=_words(item, t),
        since=since(item.at, t.units, now),
        acts=_acts(item, t),
    )


def inbox_section(
    items: Sequence[InboxItem], t: Texts, now: float | None = None, count: int | None = None
) -> Safe:
    """The owner's inbox (`#inbox`): one line per item, the oldest SHOWN of them. `items`
    may be only the first ones (board/inbox.py `inbox_page`), `count` all there are."""
    count = len(items) if count is None else count
    shown = items[:SHOWN]
    if not shown:
        body = tag('<p class="none">{text}</p>', text=t("inbox_empty"))
    else:
        lines = join(_line(item, t, now) for item in shown)
        more = ""
        if count > len(shown):
            more = tag('<p class="more">{text}</p>', text=t("inbox_more", n=count - len(shown)))
        body = tag('<ol class="inbox">{lines}</ol>{more}', lines=lines, more=Safe(more))
    return tag(
        '<section id="inbox" aria-labelledby="h-inbox"><h2 id="h-inbox">{title} '
        '<span class="count">{count}</span></h2>{body}<p class="note">{note}</p></section>',
        title=t("inbox_title"),
        count=count,
        body=body,
        note=t("inbox_reload"),
    )
