"""/inbox and /why said in chat (and by `chatbot inbox`, `chatbot why`, the web page)."""

from __future__ import annotations

from chatbot.board.inbox import InboxItem, InboxKind, Why
from chatbot.chat.texts import say
from chatbot.domain import why_words
from chatbot.domain.why_words import QUOTA_PREFIX, when
from chatbot.notify.format import one_line

# Lines a chat message lists: a board gone wrong (hundreds failed) must still read on a
# phone; the shell (`chatbot inbox`) lists them all.
SHOWN_IN_CHAT = 25


def inbox(
    items: list[InboxItem], locale: str, *, own: bool = False, shown: int | None = None
) -> str:
    """Each item one line, oldest first, the first `shown` of them (all: None); `own`:
    a requester's view of their requests."""
    if not items:
        return say(locale, "inbox_empty")
    lines = [say(locale, "inbox_head", count=len(items))]
    listed = items if shown is None else items[:shown]
    lines += [item_line(i, locale, own=own) for i in listed]
    if len(items) > len(listed):
        lines.append(say(locale, "inbox_more", count=len(items) - len(listed)))
    return "\n".join(lines)


def item_line(item: InboxItem, locale: str, *, own: bool = False) -> str:
    fields = {
        "slug": item.slug or "-",
        "since": when(item.at),
        "text": one_line(item.text.replace(QUOTA_PREFIX, ""), 120),
        "ways": ", ".join(item.ways),
        "until": when(item.until),
    }
    if item.kind == InboxKind.REQUEST:
        key = "inbox_request_own" if own else "inbox_request"
        return say(locale, key, id=item.request_id, requester=item.requester, **fields)
    return say(locale, f"inbox_{item.kind}", **fields)


def why(found: Why, locale: str) -> str:
    """One sentence (and its way on, when a person has one)."""

    def text(key: str, **fields: object) -> str:
        return say(locale, key, **fields)

    return why_words.sentence(found.slug, found.hold, found.ways, locale, text)
