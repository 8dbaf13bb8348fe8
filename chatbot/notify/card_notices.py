"""What a move of the board says in the rooms: the notice of each transition, in words.

Pure text from the change (its card, action, reason and details); the notifier posts
it inside the move's transaction. The tables say which text keys each move's notice is
made of, so that the dead-end test (tests/board/test_ways_forward.py) can hold every
command a notice suggests to the phase the move leads to.
"""

from __future__ import annotations

from typing import Any

from chatbot.board import Change
from chatbot.domain.counted import counted
from chatbot.domain.transitions import Action, Stage
from chatbot.notify.format import MAX_POST_CHARS, cut, fenced, usd
from chatbot.notify.poster import Poster
from chatbot.store.cards import Card

A = Action
# What each move of the board posts: the text keys (notify_texts) its notice is made
# of, in order. Moves not listed post nothing of their own (the chat's answer to the
# owner who made them says enough). The dead-end test reads this table: every command
# a notice suggests must be allowed in the phase the move leads to.
NOTICES: dict[Action, tuple[str, ...]] = {
    A.OPERATOR_DIRECT: ("direct",),
    A.OPERATOR_SPLIT: ("split", "split_table", "deps"),
    A.OPERATOR_SPLIT_PLANNED: ("split_plan", "split_table", "deps", "split_plan_child"),
    A.OPERATOR_NEEDS_HUMAN: ("needs_human",),
    A.BUILD_COMMITTED: ("committed",),
    A.FIXER_COMMITTED: ("fixer_committed",),
    A.BUILD_ESCALATED: ("escalated",),
    A.BUILD_LIMIT_SPENT: ("limit_spent",),
    A.BUILD_FAILED: ("failed",),
    A.REVIEW_APPROVED: ("review", "review_cut", "review_next_approve"),
    A.REVIEW_REJECTED: ("review", "review_cut", "review_next_reject"),
    A.REVIEW_FAILED: ("failed",),
    A.DEPLOY_SUCCEEDED: ("deployed",),
    A.DEPLOY_FAILED: ("failed",),
    A.SPLIT_APPLIED: ("split_applied",),
    A.SPLIT_FAILED: ("failed",),
    A.CHILDREN_DONE: ("children_done",),
    A.DRAFT_COMPLETED: ("draft_done",),
    A.DRAFT_FAILED: ("draft_failed",),
    A.RESEARCH_DONE: ("research_done",),
    A.RESEARCH_FAILED: ("research_failed",),
    A.INSPECTOR_DONE: ("inspection", "inspection_flag", "routing", "routing_none"),
    A.INSPECTOR_FAILED: ("inspector_failed",),
    A.FIXER_FAILED: ("fixer_failed",),
    A.SYNTHESIS_DONE: ("synthesis_done", "synthesis_gaps", "synthesis_no_gaps", "review_cut"),
    A.SYNTHESIS_FAILED: ("synthesis_failed",),
    A.BUDGET_STOPPED: ("budget_stopped",),
    A.RUN_INTERRUPTED: ("interrupted",),
    A.COMMENT: ("comment", "comment_fixer", "comment_steer", "comment_resumed"),
}
# A move whose card failed at a stage of its own says so with its own text (its ways on
# differ: domain/ways.py); the dead-end test reads this table with NOTICES.
STAGE_NOTICES: dict[tuple[Action, str], tuple[str, ...]] = {
    (A.FIXER_FAILED, Stage.CHECKS.value): ("fixer_failed_checks",),
}


class CardNotices:
    def __init__(self, poster: Poster):
        self.poster = poster

    def render(self, change: Change) -> str | None:
        card, details, slug = change.card, change.details, change.card.slug
        try:
            action = Action(change.action)
        except ValueError:
            return None  # a creation ("draft"), not a move of the table
        if action is Action.SPLIT_APPLIED and change.before is None:
            return None  # a child being created; its parent's notice names it
        keys = STAGE_NOTICES.get((action, card.failure_stage or "")) or NOTICES.get(action)
        if keys is None:
            return None
        if action in (Action.OPERATOR_SPLIT, Action.OPERATOR_SPLIT_PLANNED):
            return self._split(card, details, change.reason, plan=keys[0] == "split_plan")
        if action in (Action.BUILD_COMMITTED, Action.FIXER_COMMITTED):
            commit = (details.get("commit") or card.commit_hash or "")[:12]
            report = details.get("report", "")
            body = self.poster.t(keys[0], slug=slug, commit=commit, subject=change.reason)
            if details.get("comments_answered"):
                many = counted(
                    int(details["comments_answered"]), "line comment", self.poster.locale
                )
                body += "\n" + self.poster.t("comments_answered", count=many)
            for why in details.get("artifacts_skipped") or ():
                body += "\n" + self.poster.t("artifact_skipped", why=why)
            return f"{body}\n\n{report}" if report else body
        if action is Action.COMMENT:
            return self._comment(card, details)
        if action in (Action.REVIEW_APPROVED, Action.REVIEW_REJECTED):
            return self._review(card, details)
        if action is Action.INSPECTOR_DONE:
            return self._inspection(card, details.get("result", {}))
        if action is Action.SYNTHESIS_DONE:
            return self._synthesis(card, details)
        if action is Action.BUDGET_STOPPED:
            stop = details.get("budget", {})
            return self.poster.t(
                "budget_stopped",
                slug=slug,
                detail=card.failure_detail or change.reason,
                budget=usd(stop.get("budget", 0.0)),
                setting=stop.get("key", "the budget"),
            )
        return self.poster.t(
            keys[0],
            slug=slug,
            reason=change.reason,
            lane=card.lane,
            runtime=card.runtime,
            model=card.model or self.poster.t("model_default"),
            stage=card.failure_stage,
            detail=card.failure_detail or change.reason,
            phase=card.phase.label(self.poster.locale),
            children=", ".join(details.get("children", [])),
            path=details.get("path") or card.source_path,
            report=cut(details.get("report", ""), 1500, " …"),
            back=card.resume_phase.label(self.poster.locale) if card.resume_phase else "-",
        )

    def _comment(self, card: Card, details: dict[str, Any]) -> str:
        said = details.get("comment") or {}
        quote = str(said.get("quote") or "")
        quote = fenced(quote) + "\n" if quote else ""
        then = {"steer": "comment_steer", "resumed": "comment_resumed"}.get(
            str(details.get("went")), "comment_fixer"
        )
        return self.poster.t(
            "comment",
            slug=card.slug,
            by=said.get("by") or "-",
            where=said.get("where") or "-",
            quote=quote,
            body=said.get("body") or "",
            then=self.poster.t(then, slug=card.slug),
        )

    def _split(self, card: Card, details: dict[str, Any], reason: str, plan: bool = False) -> str:
        """The operator's split; as a plan for approval, with each child's profile,
        write scope and acceptance criteria too."""
        children = details.get("decision", {}).get("children", [])
        head = "split_plan" if plan else "split"
        count = counted(len(children), "child", self.poster.locale)
        lines = [self.poster.t(head, slug=card.slug, count=count, reason=reason)]
        for child in sorted(children, key=lambda c: (c["wave"], c["slug"])):
            deps = (
                self.poster.t("deps", deps=", ".join(child["blocked_by"]))
                if child["blocked_by"]
                else ""
            )
            lines.append(
                self.poster.t(
                    "split_table",
                    wave=child["wave"],
                    slug=child["slug"],
                    title=child["title"],
                    lane=child["recommended_lane"],
                    deps=deps,
                )
            )
            if plan:
                lines.append(
                    self.poster.t(
                        "split_plan_child",
                        runtime=child.get("runtime") or "-",
                        model=child.get("model") or self.poster.t("model_default"),
                        scope=", ".join(child.get("write_scope") or []) or "-",
                        criteria="; ".join(child.get("acceptance_criteria") or []) or "-",
                    )
                )
        return "\n".join(lines)

    def _review(self, card: Card, details: dict[str, Any]) -> str:
        decision = details.get("decision", card.review_decision or "?")
        path = details.get("path") or card.review_report_path or ""
        tail = self.poster.t("review_cut", path=path)
        report = cut(details.get("report", ""), MAX_POST_CHARS - 400, tail)
        nxt = (
            self.poster.t("review_next_approve")
            if decision == "approve"
            else self.poster.t("review_next_reject", slug=card.slug)
        )
        head = self.poster.t(
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
                return self.poster.t(
                    "routing",
                    slug=card.slug,
                    action=found.get("recommended_action"),
                    summary=found.get("summary", ""),
                )
            return self.poster.t("routing_none", slug=card.slug, summary=found.get("summary", ""))
        flag = ""
        if found.get("deployment_status_discrepancy"):
            flag = self.poster.t("inspection_flag", claimed=found.get("model_deployment_status"))
        return self.poster.t(
            "inspection",
            slug=card.slug,
            summary=found.get("summary", ""),
            repository=found.get("repository_status"),
            deployment=found.get("deployment_status"),
            flag=flag,
        )

    def _synthesis(self, card: Card, details: dict[str, Any]) -> str:
        gaps = details.get("gaps") or []
        path = details.get("path") or card.review_report_path or ""
        if gaps:
            found = self.poster.t(
                "synthesis_gaps",
                count=counted(len(gaps), "gap", self.poster.locale),
                gaps="\n".join(f"- {g}" for g in gaps),
            )
        else:
            found = self.poster.t("synthesis_no_gaps")
        head = self.poster.t("synthesis_done", slug=card.slug, path=path, found=found)
        tail = self.poster.t("review_cut", path=path)
        return (
            head + "\n\n" + cut(details.get("report", ""), MAX_POST_CHARS - len(head) - 200, tail)
        )

    # --- what an owner did from the web board's page (inside its transaction) ---------
