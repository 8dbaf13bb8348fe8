"""Cards rendered for people (plain text) and for scripts (a stable JSON shape)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chatbot.board import BoardSummary, Card, CardView, Event
from chatbot.domain.phases import Phase

# Bump only with a note in the README: scripts parse this.
JSON_SCHEMA_VERSION = 1


def _time(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def event_json(event: Event) -> dict[str, Any]:
    return {
        "seq": event.seq,
        "at": _time(event.at),
        "from": event.from_phase.value if event.from_phase else None,
        "to": event.to_phase.value,
        "action": event.action,
        "actor": event.actor,
        "reason": event.reason,
    }


def card_json(
    card: Card,
    *,
    parent: str | None,
    children: list[str],
    blocked_by: list[str],
    events: list[Event],
) -> dict[str, Any]:
    return {
        "slug": card.slug,
        "kind": card.kind.value,
        "title": card.title,
        "phase": card.phase.value,
        "lane": card.lane,
        "parent": parent,
        "children": children,
        "blocked_by": blocked_by,
        "commit": card.commit_hash,
        "review_decision": card.review_decision,
        "deployment_status": card.deployment_status,
        "failure": (
            {"stage": card.failure_stage, "detail": card.failure_detail}
            if card.failure_stage or card.failure_detail
            else None
        ),
        "events": [event_json(e) for e in events],
    }


def view_json(view: CardView) -> dict[str, Any]:
    return card_json(
        view.card,
        parent=view.parent,
        children=view.children,
        blocked_by=view.blocked_by,
        events=view.events,
    )


def view_text(view: CardView, locale: str = "en") -> str:
    card = view.card
    lines = [
        f"{card.slug} — {card.title}",
        f"kind: {card.kind.value}   phase: {card.phase.label(locale)}",
    ]
    if card.lane:
        lines.append(
            f"lane: {card.lane}   profile: {card.runtime or '-'} {card.model or ''}".rstrip()
        )
    if view.parent:
        lines.append(f"parent: {view.parent}")
    if view.children:
        lines.append(f"children: {', '.join(view.children)}")
    if view.blocked_by:
        lines.append(f"blocked by: {', '.join(view.blocked_by)}")
    if card.commit_hash:
        lines.append(f"commit: {card.commit_hash}")
    if card.review_decision:
        lines.append(f"review: {card.review_decision} ({card.review_report_path or 'no report'})")
    if card.deployment_status:
        lines.append(f"deployment: {card.deployment_status}")
    if card.failure_stage or card.failure_detail:
        lines.append(f"failure: {card.failure_stage or '-'}: {card.failure_detail or ''}")
    if view.active_job:
        job = view.active_job
        lines.append(f"job: {job.kind} {job.state.value} (lane {job.lane})")
    lines.append("history:")
    for event in view.events:
        source = event.from_phase.label(locale) if event.from_phase else "-"
        line = f"  {_time(event.at)}  {source} -> {event.to_phase.label(locale)}"
        line += f"  [{event.action} by {event.actor}]"
        if event.reason:
            line += f" {event.reason}"
        lines.append(line)
    return "\n".join(lines)


def summary_text(summary: BoardSummary, locale: str = "en") -> str:
    if not summary.total:
        return "The board is empty."
    lines = [f"{summary.total} cards"]
    for phase in Phase:
        count = summary.counts.get(phase)
        if not count:
            continue
        lines.append(f"{phase.label(locale)}: {count}")
        for slug in summary.cards_by_phase.get(phase, []):
            lines.append(f"  {slug}")
    if summary.active_jobs:
        lines.append(f"jobs: {len(summary.active_jobs)} queued or running")
    return "\n".join(lines)
