"""A hold (domain/why.py) said in words: which sentence of a catalogue, with which values.

Chat (/why, `chatbot why`) and the card's web page each keep their own catalogue (the
web may not import the chat); both fill it here, so they say the same values the same
way, and a hold's sentence cannot drift between them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from chatbot.domain.counted import counted
from chatbot.domain.phases import Phase
from chatbot.domain.why import Hold, HoldKind

#: A catalogue's lookup: the text of `key` with its fields filled in.
Say = Callable[..., str]

# How the worker words a quota wait's error (pipeline/quota.py); the sentence says it already.
QUOTA_PREFIX = "quota or rate limit: "


def when(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "-"


def sentence(slug: str, held: Hold, ways: tuple[str, ...], locale: str, say: Say) -> str:
    """One sentence (and its way on, when a person has one); `ways` are filled in."""
    facts = dict(held.facts)
    fields: dict[str, object] = {"slug": slug, **facts}
    for key in ("since", "last_seen", "until"):
        if key in facts:
            fields[key] = when(facts[key])
    if held.kind is HoldKind.QUOTA:
        fields["detail"] = str(facts.get("detail", "-")).replace(QUOTA_PREFIX, "")
    if "phase" in facts:
        fields["phase"] = Phase(facts["phase"]).label(locale)
    if "cards" in facts:
        fields["cards"] = ", ".join(
            f"{c[0]} ({Phase(c[1]).label(locale)})" if isinstance(c, (tuple, list)) else c
            for c in facts["cards"]
        )
    if "count" in facts:
        # What is counted: a split plan's cards, or the jobs ahead in a lane.
        noun = "card" if held.kind is HoldKind.SPLIT_PLAN else "job"
        fields["count"] = counted(facts["count"], noun, locale)
    key = f"why_{held.kind.value}"
    if held.kind is HoldKind.LEASE_LOST:
        taken = "why_taken" if facts.get("requeued", True) else "why_fails"
        taken += "_live" if facts["live_worker"] else "_none"
        fields["taken"] = say(taken, ends=when(facts["taken_over_at"]), lane=facts["lane"])
    if held.kind is HoldKind.NO_WORKER and facts.get("host") is None:
        key = "why_no_worker_never"
    text = say(key, **fields)
    if ways:
        text += say("why_ways", ways=", ".join(ways))
    return text
