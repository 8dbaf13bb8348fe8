"""The notifier: turns board changes and model runs into posts for every configured room.

It is a board listener, so each post is written into the outbox in the same
transaction as the change it reports: a restart loses no notification, and a
rolled-back change posts nothing.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chatbot.board import Change
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.notify_texts import text
from chatbot.store import Db, Store
from chatbot.store import chat as chat_store
from chatbot.store.cards import Card
from chatbot.store.telemetry import RunRecord

MAX_POST_CHARS = 3500
NUMBER_KEYS = ("1️⃣", "2️⃣", "3️⃣", "4️⃣")
FAILED_PHASES = {
    Phase.FAILED,
    Phase.DRAFT_FAILED,
    Phase.RESEARCH_FAILED,
    Phase.INSPECTOR_FAILED,
    Phase.FIXER_FAILED,
}


@dataclass(frozen=True)
class Destination:
    transport: str
    room: str
    kind: str = "room"  # or "person": the console is one person's screen


def cut(body: str, limit: int, tail: str = "") -> str:
    """Shorten at a line or word boundary, never mid-character; `tail` says where the rest is."""
    if len(body) <= limit:
        return body
    room = max(0, limit - len(tail))
    clipped = body[:room]
    boundary = max(clipped.rfind("\n"), clipped.rfind(" "))
    if boundary > room // 2:
        clipped = clipped[:boundary]
    return clipped.rstrip() + tail


def as_html(body: str) -> str:
    lines = html.escape(body).split("\n")
    if lines:
        lines[0] = f"<b>{lines[0]}</b>"
    return "<br>".join(lines)


def _duration(seconds: float) -> str:
    return f"{seconds:.1f}s" if seconds < 120 else f"{seconds / 60:.1f}min"


class Notifier:
    def __init__(self, store: Store, destinations: Sequence[Destination], locale: str = "en"):
        self.store = store
        self.destinations = list(destinations)
        self.locale = locale

    # --- posting ----------------------------------------------------------------

    async def _post(
        self,
        db: Db,
        body: str,
        *,
        card: Card | None,
        purpose: str,
        question_id: int | None = None,
    ) -> None:
        body = cut(body, MAX_POST_CHARS, " …")
        targets = [(d.transport, d.kind, d.room) for d in self.destinations]
        origin = card.data.get("origin") if card else None
        if isinstance(origin, dict) and origin.get("target_kind") == "person":
            mine = (origin["transport"], "person", origin["target"])
            if mine not in targets:
                targets.append(mine)
        for transport, kind, target in targets:
            await chat_store.enqueue(
                db,
                chat_store.Post(
                    transport=transport,
                    target=target,
                    target_kind=kind,
                    text=body,
                    html=as_html(body) if transport == "matrix" else None,
                    card_id=card.id if card else None,
                    question_id=question_id,
                    purpose=purpose,
                ),
            )

    def t(self, key: str, **values: object) -> str:
        return text(self.locale, key, **values)

    # --- board changes (inside the change's transaction) ----------------------------

    async def __call__(self, db: Db, change: Change) -> None:
        body = self._render(change)
        card = change.card
        if body:
            await self._post(db, body, card=card, purpose=f"card:{change.action}")
        if change.question is not None:
            question = change.question
            lines = [self.t("question", slug=card.slug, text=question.text)]
            lines += [f"{NUMBER_KEYS[i]} {option}" for i, option in enumerate(question.options)]
            lines.append(self.t("question_hint", slug=card.slug))
            await self._post(
                db, "\n".join(lines), card=card, purpose="question", question_id=question.id
            )

    def _render(self, change: Change) -> str | None:  # noqa: PLR0911 - one case per action
        card, details, slug = change.card, change.details, change.card.slug
        action = change.action
        if action == Action.OPERATOR_DIRECT:
            return self.t(
                "direct",
                slug=slug,
                lane=card.lane,
                runtime=card.runtime,
                model=card.model or "default",
                reason=change.reason,
            )
        if action == Action.OPERATOR_SPLIT:
            return self._split(card, details, change.reason)
        if action == Action.OPERATOR_NEEDS_HUMAN:
            return self.t("needs_human", slug=slug, reason=change.reason)
        if action == Action.OPERATOR_FAILED:
            return self.t("operator_failed", slug=slug, detail=card.failure_detail or "")
        if action in (Action.BUILD_COMMITTED, Action.FIXER_COMMITTED):
            commit = (details.get("commit") or card.commit_hash or "")[:12]
            report = details.get("report", "")
            body = self.t("committed", slug=slug, commit=commit, subject=change.reason)
            return f"{body}\n\n{report}" if report else body
        if action == Action.BUILD_ESCALATED:
            return self.t("escalated", slug=slug, reason=change.reason)
        if action == Action.BUILD_LIMIT_SPENT:
            return self.t("limit_spent", slug=slug, reason=change.reason)
        if action in (Action.REVIEW_APPROVED, Action.REVIEW_REJECTED):
            return self._review(card, details)
        if action == Action.DEPLOY_SUCCEEDED:
            return self.t("deployed", slug=slug, reason=change.reason)
        if action == Action.CHILDREN_DONE:
            return self.t("children_done", slug=slug)
        if action == Action.SPLIT_APPLIED and change.before is not None:
            return self.t(
                "split_applied", slug=slug, children=", ".join(details.get("children", []))
            )
        if action == Action.DRAFT_COMPLETED:
            return self.t("draft_done", slug=slug, path=card.source_path)
        if action == Action.RESEARCH_DONE:
            report = cut(details.get("report", ""), 1500, " …")
            return self.t("research_done", slug=slug, path=details.get("path"), report=report)
        if action == Action.INSPECTOR_DONE:
            return self._inspection(card, details.get("result", {}))
        if card.phase in FAILED_PHASES and change.before is not None and action != Action.CANCEL:
            if card.phase is Phase.FAILED:
                return self.t(
                    "failed", slug=slug, stage=card.failure_stage, detail=card.failure_detail
                )
            return self.t(
                "failed_other",
                slug=slug,
                phase=card.phase.label(self.locale),
                detail=card.failure_detail or change.reason,
            )
        return None

    def _split(self, card: Card, details: dict[str, Any], reason: str) -> str:
        children = details.get("decision", {}).get("children", [])
        lines = [self.t("split", slug=card.slug, count=len(children), reason=reason)]
        for child in sorted(children, key=lambda c: (c["wave"], c["slug"])):
            deps = (
                self.t("deps", deps=", ".join(child["blocked_by"])) if child["blocked_by"] else ""
            )
            lines.append(
                self.t(
                    "split_table",
                    wave=child["wave"],
                    slug=child["slug"],
                    title=child["title"],
                    lane=child["recommended_lane"],
                    deps=deps,
                )
            )
        return "\n".join(lines)

    def _review(self, card: Card, details: dict[str, Any]) -> str:
        decision = details.get("decision", card.review_decision or "?")
        path = details.get("path") or card.review_report_path or ""
        tail = self.t("review_cut", path=path)
        report = cut(details.get("report", ""), MAX_POST_CHARS - 400, tail)
        nxt = (
            self.t("review_next_approve")
            if decision == "approve"
            else self.t("review_next_reject", slug=card.slug)
        )
        head = self.t(
            "review",
            slug=card.slug,
            decision=decision,
            commit=(card.commit_hash or "")[:12],
            report=report,
        )
        return f"{head}\n\n{nxt}"

    def _inspection(self, card: Card, found: dict[str, Any]) -> str:
        if found.get("mode") == "route_next":
            if found.get("pending"):
                return self.t(
                    "routing",
                    slug=card.slug,
                    action=found.get("recommended_action"),
                    summary=found.get("summary", ""),
                )
            return self.t("routing_none", slug=card.slug, summary=found.get("summary", ""))
        flag = ""
        if found.get("deployment_status_discrepancy"):
            flag = self.t("inspection_flag", claimed=found.get("model_deployment_status"))
        return self.t(
            "inspection",
            slug=card.slug,
            summary=found.get("summary", ""),
            repository=found.get("repository_status"),
            deployment=found.get("deployment_status"),
            flag=flag,
        )

    # --- model runs (from the worker) -----------------------------------------------

    async def run_started(self, card: Card, role: str, runtime: str, model: str) -> None:
        async with self.store.transaction() as db:
            await self._post(
                db,
                self.t(
                    "run_started",
                    slug=card.slug,
                    role=role,
                    runtime=runtime,
                    model=model or "default",
                ),
                card=card,
                purpose="run",
            )

    async def run_finished(self, card: Card, record: RunRecord) -> None:
        tokens = (
            f"{record.input_tokens or 0} in / {record.output_tokens or 0} out tokens"
            if record.input_tokens is not None
            else "tokens unknown"
        )
        cost = f", ${record.cost_usd:.4f}" if record.cost_usd is not None else ""
        outcome = "ok" if record.outcome == "ok" else f"failed: {cut(record.outcome, 160, ' …')}"
        async with self.store.transaction() as db:
            await self._post(
                db,
                self.t(
                    "run_finished",
                    slug=card.slug,
                    role=record.role,
                    outcome=outcome,
                    duration=_duration(record.duration_s),
                    tokens=tokens,
                    cost=cost,
                ),
                card=card,
                purpose="run",
            )
