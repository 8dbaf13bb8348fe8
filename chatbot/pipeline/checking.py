"""Read-only runs that judge or inform: reviewer, researcher, inspector."""

from __future__ import annotations

from typing import Literal

from chatbot.board import inspection_record, review_record
from chatbot.board.comments import agent_view
from chatbot.domain import checks
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.pipeline import gate
from chatbot.pipeline.building import card_worktree
from chatbot.pipeline.context import JobContext, RunFailed
from runners import prompts
from runners.contracts import (
    Evidence,
    TrustedDeployment,
    parse_inspection,
    parse_research,
    parse_review,
    parse_routing,
    routing_actions,
)
from runners.workspace import head


async def run_reviewer(ctx: JobContext) -> None:
    card = ctx.card
    commit = card.commit_hash
    if not commit:
        raise RunFailed("the card has no commit to review")
    worktree = await card_worktree(ctx)
    if worktree.remote and await head(worktree) != commit:
        # The remote's card branch is not the commit the builder reported: review nothing else.
        raise RunFailed(f"the remote's {worktree.branch} is not at {commit[:12]}")
    intent_path, body = ctx.intent()
    prompt = prompts.reviewer_prompt(
        slug=card.slug,
        commit_hash=commit,
        intent_path=intent_path,
        intent_body=body,
        acceptance_criteria=card.acceptance_criteria,
        builder_report=card.data.builder_report,
        owner_comments=agent_view(await ctx.board.comments.answered_by(card, commit)),
        checks=gate.for_reviewer(checks.record_of(card.data.checks, commit)),
    )
    result = await ctx.run(prompt, cwd=worktree.path)
    review = parse_review(result.output.answer, commit)
    report_path = f"docs/review/{card.slug}.md"
    files = ctx.staged()
    files.add(report_path, review.report)
    entry = {"commit": commit, "decision": review.verdict.decision, "report": review.report}
    data = card.data.updated(reviews=[*card.data.reviews, review_record(entry)])
    details = {"decision": review.verdict.decision, "report": review.report, "path": report_path}
    if review.verdict.decision == "approve":
        deploy = ctx.config.deploy is not None and bool(ctx.config.deploy.command)
        # A commit whose checks were skipped waits for the owner's /deploy --skip-checks.
        deploy = deploy and checks.deploy_refusal(card.data.checks, card.slug, commit) is None
        await ctx.apply(
            Action.REVIEW_APPROVED,
            reason=f"review approved {commit[:12]}",
            files=files,
            deploy=deploy,
            details=details,
            review_decision="approve",
            review_report_path=report_path,
            deployment_status="queued" if deploy else "pending",
            data=data,
        )
    else:
        await ctx.apply(
            Action.REVIEW_REJECTED,
            reason=f"review rejected {commit[:12]}",
            files=files,
            details=details,
            review_decision="reject",
            review_report_path=report_path,
            data=data,
        )


async def run_researcher(ctx: JobContext) -> None:
    card = ctx.card
    if card.phase is Phase.RESEARCH_REQUESTED:
        ctx.card = await ctx.board.apply(card.slug, Action.RESEARCH_STARTED, reason="run started")
        card = ctx.card
    intent_path, body = ctx.intent()
    prompt = prompts.researcher_prompt(
        slug=card.slug, research_intent_path=intent_path, intent_body=body
    )
    result = await ctx.run(prompt, cwd=ctx.repo)
    report = parse_research(result.output.answer)
    path = f"docs/research/{card.slug}.md"
    files = ctx.staged()
    files.add(path, report.report)
    await ctx.apply(
        Action.RESEARCH_DONE,
        reason=f"report written to {path}",
        files=files,
        details={"report": report.report, "path": path},
        data=card.data.updated(research_report=path),
    )


def trusted_deployment(ctx: JobContext) -> TrustedDeployment:
    """What the board itself knows about deployment; it beats anything a model says."""
    card = ctx.card
    status = card.deployment_status
    verdict: Literal["deployed", "not_deployed", "unknown"]
    if status == "deployed":
        verdict = "deployed"
    elif card.resume_phase in (Phase.PLANNED, Phase.NEEDS_HUMAN) or status in ("pending", "queued"):
        verdict = "not_deployed"
    else:
        verdict = "unknown"
    finding = (
        f"board phase before inspection: {card.resume_phase.value if card.resume_phase else '-'}"
    )
    finding += f"; deployment status: {status or 'none'}"
    if card.commit_hash:
        finding += f"; commit {card.commit_hash}"
    return TrustedDeployment(
        status=verdict, evidence=(Evidence(source="intent board", finding=finding),)
    )


async def run_inspector(ctx: JobContext) -> None:
    card = ctx.card
    mode = ctx.payload.get("mode") or card.data.inspect_mode or "implementation_status"
    intent_path, body = ctx.intent()
    reviews = card.data.reviews
    trusted = trusted_deployment(ctx)
    actions = routing_actions(ctx.allowed)
    prompt = prompts.inspector_prompt(
        mode=mode,
        slug=card.slug,
        checked_revision=card.commit_hash,
        deployment=trusted,
        intent_path=intent_path,
        intent_body=body,
        builder_report=card.data.builder_report,
        failure=f"{card.failure_stage or ''}: {card.failure_detail or ''}".strip(": "),
        review_report=reviews[-1]["report"] if reviews else "",
        question_history=[
            {"question": a["question"], "answer": a["answer"]}
            for a in card.data.answers
            if a["kind"] == "inspector"
        ],
        allowed_actions=actions,
    )
    result = await ctx.run(prompt, cwd=ctx.repo)
    if mode == "route_next":
        routing = parse_routing(result.output.answer, actions)
        found = routing.model_dump(mode="json")
        found["pending"] = routing.outcome == "recommendation"
        question = routing.question if routing.outcome == "needs_input" else None
    else:
        inspection = parse_inspection(result.output.answer, trusted)
        found = inspection.model_dump(mode="json")
        question = inspection.question
    data = card.data.updated(inspect_mode=mode, inspection=inspection_record(found))
    if question:
        await ctx.apply(
            Action.INSPECTOR_ASKED,
            reason="the inspector asks",
            question=("inspector", question, []),
            details={"result": found},
            data=data,
        )
    else:
        await ctx.apply(
            Action.INSPECTOR_DONE,
            reason=found.get("summary", "inspected"),
            details={"result": found},
            data=data,
        )
