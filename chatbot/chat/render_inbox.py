"""/inbox and /why said in chat (and by `chatbot inbox`, `chatbot why`, the web page)."""

from __future__ import annotations

from datetime import UTC, datetime

from chatbot.board.inbox import InboxItem, Kind, Why
from chatbot.chat.texts import say
from chatbot.domain.phases import Phase
from chatbot.domain.why import HoldKind
from chatbot.notify.format import one_line

# How the worker words a quota wait's error (pipeline/quota.py); the sentence says it already.
_QUOTA_PREFIX = "quota or rate limit: "


def when(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "-"


def inbox(items: list[InboxItem], locale: str, *, own: bool = False) -> str:
    """Every item one line, oldest first; `own`: a requester's view of their requests."""
    if not items:
        return say(locale, "inbox_empty")
    lines = [say(locale, "inbox_head", count=len(items))]
    lines += [item_line(i, locale, own=own) for i in items]
    return "\n".join(lines)


def item_line(item: InboxItem, locale: str, *, own: bool = False) -> str:
    fields = {
        "slug": item.slug or "-",
        "since": when(item.at),
        "text": one_line(item.text.replace(_QUOTA_PREFIX, ""), 120),
        "ways": ", ".join(item.ways),
        "until": when(item.until),
    }
    if item.kind == Kind.REQUEST:
        key = "inbox_request_own" if own else "inbox_request"
        return say(locale, key, id=item.request_id, requester=item.requester, **fields)
    return say(locale, f"inbox_{item.kind}", **fields)


def why(found: Why, locale: str) -> str:
    """One sentence (and its way on, when a person has one)."""
    held = found.hold
    facts = dict(held.facts)
    fields: dict[str, object] = {"slug": found.slug, **facts}
    for key in ("since", "last_seen", "until"):
        if key in facts:
            fields[key] = when(facts[key])
    if held.kind is HoldKind.QUOTA:
        fields["detail"] = str(facts.get("detail", "-")).replace(_QUOTA_PREFIX, "")
    if "phase" in facts:
        fields["phase"] = Phase(facts["phase"]).label(locale)
    if "cards" in facts:
        fields["cards"] = ", ".join(
            f"{c[0]} ({Phase(c[1]).label(locale)})" if isinstance(c, (tuple, list)) else c
            for c in facts["cards"]
        )
    key = f"why_{held.kind.value}"
    if held.kind is HoldKind.LEASE_LOST:
        taken = "why_taken" if facts.get("requeued", True) else "why_fails"
        taken += "_live" if facts["live_worker"] else "_none"
        fields["taken"] = say(locale, taken, ends=when(facts["taken_over_at"]), lane=facts["lane"])
    if held.kind is HoldKind.NO_WORKER and facts.get("host") is None:
        key = "why_no_worker_never"
    text = say(locale, key, **fields)
    if found.ways:
        text += say(locale, "why_ways", ways=", ".join(found.ways))
    return text
