"""Cards for scripts: the stable JSON shape of `chatbot cards --json` and `card --json`.

(People get the same text as in chat: chat/render.py.)
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chatbot.board import Attachment, Card, CardView, Event, RunRecord
from chatbot.board.inbox import InboxItem, Why
from chatbot.chat.render import ways_forward
from chatbot.domain import checks

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


def attachment_json(file: Attachment) -> dict[str, Any]:
    """One file of a card: what it is, who sent it when, what it went with."""
    return {
        "id": file.id,
        "name": file.name,
        "kind": file.kind.value,
        "content_type": file.content_type,
        "size": file.size,
        "sha256": file.sha256,
        "by": file.actor or None,
        "at": _time(file.created_at),
        "purpose": file.purpose or None,
        "question": file.question_id,
        "encrypted": file.encrypted,
        "gone": file.gone,
    }


def card_json(
    card: Card,
    *,
    parent: str | None,
    children: list[str],
    blocked_by: list[str],
    events: list[Event],
    ways: list[dict[str, str]] | None = None,
    attachments: list[Attachment] | None = None,
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
        "pipeline_run_id": card.pipeline_run_id,
        "acceptance_criteria": list(card.acceptance_criteria),
        "failure": (
            {"stage": card.failure_stage, "detail": card.failure_detail}
            if card.failure_stage or card.failure_detail
            else None
        ),
        # Added within schema_version 1: a new key breaks no script that reads the others.
        "ways_forward": ways or [],
        # The repository's checks of this commit: verdict, duration_s, tail, command.
        "checks": checks.record_of(card.data.checks, card.commit_hash),
        "attachments": [attachment_json(a) for a in attachments or []],
        "events": [event_json(e) for e in events],
    }


def run_json(slug: str, run: RunRecord) -> dict[str, Any]:
    """One run of `chatbot runs --pipeline ID --json`."""
    return {
        "card": slug,
        "at": _time(run.created_at),
        "role": run.role,
        "runtime": run.runtime,
        "model": run.actual_model or run.configured_model,
        "reasoning_effort": run.reasoning_effort or None,
        "actual_reasoning_effort": run.actual_reasoning_effort,
        "outcome": run.outcome,
        "accepted": run.accepted,
        "rejection": run.rejection,
        "review_decision": run.review_decision,
        "duration_s": round(run.duration_s, 3),
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "cost_usd": run.cost_usd,
        "cost_estimated": run.cost_estimated,
        "pipeline_run_id": run.pipeline_run_id,
    }


def view_json(view: CardView, locale: str = "en", prefix: str = "/") -> dict[str, Any]:
    """`locale` and `prefix` (the first configured command prefix): of the ways on."""
    ways = [
        {"action": action.value, "command": command, "text": text}
        for action, command, text in ways_forward(view.card, locale, prefix)
    ]
    return card_json(
        view.card,
        parent=view.parent,
        children=view.children,
        blocked_by=view.blocked_by,
        events=view.events,
        ways=ways,
        attachments=view.attachments,
    )


def inbox_json(items: list[InboxItem]) -> dict[str, Any]:
    """`chatbot inbox --json`: what waits for an owner, oldest first."""
    rows = [
        {
            "kind": i.kind,
            "at": _time(i.at),
            "card": i.slug,
            "request": i.request_id,
            "requester": i.requester,
            "text": i.text,
            "ways": list(i.ways),
            "until": _time(i.until) if i.until else None,
        }
        for i in items
    ]
    return {"schema_version": JSON_SCHEMA_VERSION, "items": rows}


def why_json(found: Why, sentence: str) -> dict[str, Any]:
    """`chatbot why SLUG --json`: the first thing that holds the card."""
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "card": found.slug,
        "phase": found.phase.value,
        "hold": found.hold.kind.value,
        "facts": found.hold.facts,
        "ways": list(found.ways),
        "text": sentence,
    }
