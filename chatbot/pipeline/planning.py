"""Operator and planner runs: decide, split, draft. All read-only; the wrapper writes."""

from __future__ import annotations

import tempfile
from pathlib import Path

from chatbot.board import OPERATOR_FAILED_QUESTION, CardChanges, CardData, NewChild, split_plan
from chatbot.board.files import FileExistsRefusal, StagedFiles
from chatbot.board.importer import title_of
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.pipeline.context import JobContext, RunFailed
from runners import prompts
from runners.contracts import (
    DraftQuestion,
    OperatorDecision,
    Question,
    parse_draft,
    parse_operator_decision,
    parse_split,
)
from runners.contracts.question import parse_question


def _clarifications(ctx: JobContext) -> str:
    answers = [
        a
        for a in ctx.card.data.answers
        if a["kind"] in ("needs_human", OPERATOR_FAILED_QUESTION, "split_plan")
    ]
    if not answers:
        return ""
    return "\n\n".join(f"Question: {a['question']}\nOwner's answer: {a['answer']}" for a in answers)


async def run_operator(ctx: JobContext) -> None:
    """The operator decides how the card goes on: straight to a builder, a question for
    the owner, or a split into children (planned for approval when splits are confirmed)."""
    card = ctx.card
    decision = await _decide(ctx)
    details = {"decision": decision.model_dump(mode="json")}
    data = card.data.updated(operator_reason=decision.reason)
    if decision.decision == "direct_builder":
        await ctx.apply(
            Action.OPERATOR_DIRECT,
            reason=decision.reason,
            details=details,
            **_builder_fields(ctx, decision, data),
        )
        return
    if decision.decision == "needs_human":
        # The same text-plus-options format as the planner's questions, so the owner
        # can answer a choice with a reaction.
        asked = parse_question(decision.human_action or decision.reason, "human_action", Question)
        await ctx.apply(
            Action.OPERATOR_NEEDS_HUMAN,
            reason=decision.reason,
            details=details,
            question=("needs_human", asked.text, list(asked.options)),
            data=data,
        )
        return
    children = _children(ctx, decision)
    if ctx.config.bot.confirm_splits:
        # Checked now (slugs free, files absent) so the owner approves a plan that can be
        # made; written only on approval, when it is checked once more.
        (await _stage_children(ctx, children)).discard()
        await ctx.apply(
            Action.OPERATOR_SPLIT_PLANNED,
            reason=decision.reason,
            details=details,
            question=("split_plan", decision.reason, []),
            data=data.updated(split_plan=split_plan.dump(children)),
        )
        return
    files = await _stage_children(ctx, children)
    await ctx.apply(
        Action.OPERATOR_SPLIT,
        reason=decision.reason,
        details=details,
        children=[new for new, _ in children],
        files=files,
        data=data,
    )


async def _decide(ctx: JobContext) -> OperatorDecision:
    """The operator's run on the card's intent, and its decision as the contract reads it."""
    card = ctx.card
    intent_path, body = ctx.intent()
    prompt = prompts.operator_prompt(
        slug=card.slug,
        intent_path=intent_path,
        intent_body=body,
        allowed=ctx.allowed,
        clarifications=_clarifications(ctx),
    )
    result = await ctx.run(prompt, cwd=ctx.repo)
    return parse_operator_decision(result.output.answer, ctx.allowed, card.slug)


def _builder_fields(ctx: JobContext, decision: OperatorDecision, data: CardData) -> CardChanges:
    """The card's fields for a direct builder: the chosen lane's profile and ladder."""
    lane = ctx.allowed.lanes[decision.recommended_lane or ""]
    return {
        "lane": lane.lane,
        "runtime": decision.runtime,
        "model": decision.model,
        "reasoning_effort": decision.reasoning_effort or "",
        "iteration_limit": lane.iteration_limit,
        "escalation": [step.model_dump(mode="json") for step in decision.escalation],
        "escalation_step": 0,
        "failure_stage": None,
        "failure_detail": None,
        "data": data,
    }


def _children(ctx: JobContext, decision: OperatorDecision) -> list[tuple[NewChild, str]]:
    """Each child of the split as the board creates it, with its intent's text."""
    children = []
    for child in decision.children:
        lane = ctx.allowed.lanes[child.recommended_lane]
        new = NewChild(
            slug=child.slug,
            title=child.title,
            intent_path=f"docs/intent/{child.slug}.md",
            blocked_by=tuple(child.blocked_by),
            fields={
                "lane": lane.lane,
                "runtime": child.runtime,
                "model": child.model,
                "reasoning_effort": child.reasoning_effort or "",
                "iteration_limit": lane.iteration_limit,
                "wave": child.wave,
                "write_scope": list(child.write_scope),
                "acceptance_criteria": list(child.acceptance_criteria),
                "escalation": [s.model_dump(mode="json") for s in child.escalation],
                "data": {"auto_start": True},
            },
        )
        children.append((new, child.intent_markdown))
    return children


async def _stage_children(ctx: JobContext, children: list[tuple[NewChild, str]]) -> StagedFiles:
    """Write every child's intent file aside, or nothing: no file may exist, no slug be taken."""
    files = ctx.staged()
    try:
        for child, markdown in children:
            files.add(child.intent_path, markdown, must_be_new=True)
            if await ctx.board.reads.slug_taken(child.slug):
                raise RunFailed(f"a card '{child.slug}' exists already; nothing was created")
    except FileExistsRefusal as refusal:
        files.discard()
        raise RunFailed(str(refusal)) from None
    except BaseException:
        files.discard()
        raise
    return files


async def run_split(ctx: JobContext) -> None:
    card = ctx.card
    intent_path, body = ctx.intent()
    report = card.data.builder_report
    reviews = card.data.reviews
    if reviews:
        report += "\n\nLast review:\n" + reviews[-1]["report"]
    prompt = prompts.planner_split_prompt(
        slug=card.slug, intent_path=intent_path, intent_body=body, builder_report=report
    )
    result = await ctx.run(prompt, cwd=ctx.repo)
    proposal = parse_split(result.output.answer, card.slug)
    children = [
        (
            NewChild(
                slug=child.slug,
                title=title_of(child.body, child.slug),
                intent_path=f"docs/intent/{child.slug}.md",
            ),
            child.body,
        )
        for child in proposal.children
    ]
    files = await _stage_children(ctx, children)
    await ctx.apply(
        Action.SPLIT_APPLIED,
        reason=f"split into {len(children)} cards",
        details={"children": [new.slug for new, _ in children]},
        children=[new for new, _ in children],
        files=files,
    )


async def run_draft(ctx: JobContext) -> None:
    card = ctx.card
    conversation = card.data.conversation
    prompt = prompts.planner_draft_prompt(conversation=conversation)
    # The intake planner sees no repository at all: an empty folder is its world.
    with tempfile.TemporaryDirectory(prefix="draft-") as empty:
        result = await ctx.run(prompt, cwd=Path(empty))
    answer = parse_draft(result.output.answer)
    if isinstance(answer, DraftQuestion):
        data = card.data.updated(conversation=[*conversation, ("planner", answer.text)])
        await ctx.apply(
            Action.DRAFT_ASKED,
            reason="the planner asks",
            question=("draft", answer.text, list(answer.options)),
            data=data,
        )
        return
    path = f"docs/intent/{answer.slug}.md"
    if await ctx.board.reads.slug_taken(answer.slug):
        raise RunFailed(f"a card '{answer.slug}' exists already; the draft is kept")
    files = ctx.staged()
    try:
        files.add(path, answer.body, must_be_new=True)
    except FileExistsRefusal as refusal:
        files.discard()
        raise RunFailed(str(refusal)) from None
    data = card.data.updated(
        conversation=[*conversation, ("planner", f"intent written: {path}")],
        draft_slug=card.slug,
    )
    await ctx.apply(
        Action.DRAFT_COMPLETED,
        reason=f"intent written to {path}",
        files=files,
        details={"intent_path": path, "from_draft": card.slug},
        rename_to=answer.slug,
        kind=Kind.INTENT,
        title=title_of(answer.body, answer.slug),
        source_path=path,
        data=data,
    )


async def run_planner(ctx: JobContext) -> None:
    """The planner's job: a turn of a draft dialogue, or a split of a card."""
    if ctx.card.phase is Phase.DRAFT_RUNNING:
        await run_draft(ctx)
    else:
        await run_split(ctx)
