"""Builder and fixer runs: agents that change files, each in the card's own git worktree.

The agent only edits; the wrapper commits with the message the agent proposes,
and a run that changed nothing is a failure with a clear reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, Unpack

from chatbot.board import DataChanges, checks_record
from chatbot.board.comments import agent_view
from chatbot.domain.checks import record_of, shown
from chatbot.domain.transitions import Action
from chatbot.pipeline import artifacts, gate, redaction, sandboxing
from chatbot.pipeline.context import JobContext, RunFailed
from runners import prompts
from runners.contracts import (
    BuilderAnswer,
    FixerQuestion,
    parse_builder_answer,
    parse_fixer_answer,
)
from runners.contracts.markers import BUILDER_REPORT, COMMIT_MESSAGE, FIXER_QUESTION
from runners.runtimes import RUNTIMES, Usage
from runners.workspace import (
    CommitRefused,
    NoChangesError,
    WorkspaceError,
    Worktree,
    WorktreeTampered,
    commit_all,
    create_worktree,
)

MAX_FIXER_QUESTION_ROUNDS = 2
AnswerT = TypeVar("AnswerT")
BOT_AUTHOR = ("intent-board", "intent-board@localhost")


async def card_worktree(ctx: JobContext) -> Worktree:
    if ctx.target_branch is None:
        raise RunFailed(f"{ctx.repo} is not a git repository with a branch to build on")
    try:
        return await create_worktree(
            ctx.repo,
            ctx.config.bot.workspaces,
            ctx.card.slug,
            ctx.target_branch,
            shared=ctx.config.bot.remote is not None,
        )
    except WorkspaceError as error:
        raise RunFailed(f"cannot prepare the worktree: {error}") from None


async def _commit_and_review(
    ctx: JobContext,
    worktree: Worktree,
    answer: BuilderAnswer,
    action: Action,
    commit: str,
    checked: dict[str, object] | None,
    **data: Unpack[DataChanges],
) -> None:
    """The wrapper committed what the agent changed (and its checks passed): the review
    of that commit is queued."""
    files = ctx.config.files
    offered = await artifacts.keep(
        ctx.board,
        worktree.path,
        answer.artifacts,
        limit=files.max_size_mb * 1024 * 1024,
        max_pixels=files.max_pixels,
    )
    details: dict[str, object] = {"commit": commit, "report": answer.report}
    if answer.artifacts:
        details |= {"artifacts": offered.kept, "artifacts_skipped": offered.skipped}
    if checked is not None:
        details["checks"] = checked["verdict"]
    await ctx.apply(
        action,
        reason=answer.commit_message.subject,
        details=details,
        commit_hash=commit,
        # A new commit has not been reviewed or deployed yet, whatever the old one was.
        review_decision=None,
        review_report_path=None,
        deployment_status=None,
        failure_stage=None,
        failure_detail=None,
        data=ctx.card.data.updated(
            checks=checks_record(checked) if checked is not None else None,
            builder_report=answer.report,
        ).updated(**data),
    )


async def _checked(
    ctx: JobContext,
    worktree: Worktree,
    prompt: str,
    limit: int,
    markers: tuple[str, ...],
    parse: Callable[[str], AnswerT],
) -> gate.Checked[AnswerT]:
    """Agent turns until a commit passes the repository's checks, all within `limit`
    iterations: a commit that fails them is kept, and the agent's next iteration (in
    the same session) gets the end of their output to fix it on top."""
    resume: str | None = None
    usage: Usage | None = None
    left = limit
    while True:
        turns = await agent_turns(ctx, prompt, worktree, left, markers, resume=resume, usage=usage)
        if turns.answer is None:
            return gate.Checked(turns, None, None, None)
        answer = parse(turns.answer)
        if not isinstance(answer, BuilderAnswer):
            return gate.Checked(turns, answer, None, None)  # a fixer's question: no commit
        commit = await _commit(ctx, worktree, answer)
        record = await gate.check(ctx, worktree, commit)
        if gate.passed(record) or turns.left <= 0:
            return gate.Checked(turns, answer, commit, record)
        assert record is not None
        await gate.sent_back(ctx, record, limit - turns.left + 1, limit)
        prompt, resume, usage, left = (
            gate.next_prompt(record),
            turns.session,
            turns.usage,
            turns.left,
        )


async def _commit(ctx: JobContext, worktree: Worktree, answer: BuilderAnswer) -> str:
    redactor = redaction.of(ctx.config)

    def holds_a_secret(diff: str) -> str | None:
        keys = redactor.found(diff)
        if not keys:
            return None
        return (
            f"the change holds the value of the bot's secret {', '.join(keys)}; "
            "/fix has the agent take it out"
        )

    try:
        hooks = ctx.config.repo.run_hooks
        return await commit_all(
            worktree,
            answer.commit_message.text(),
            author=BOT_AUTHOR,
            refuse=holds_a_secret,
            run_hooks=hooks,
            hooks_sandbox=(
                sandboxing.for_hooks(ctx.config, worktree.path, worktree.admin) if hooks else None
            ),
        )
    except CommitRefused as error:
        raise RunFailed(f"not committed: {error}") from None
    except NoChangesError:
        raise RunFailed(
            "the agent returned a commit message but changed no file; nothing to review"
        ) from None
    except WorktreeTampered as error:
        # Nothing of the run is kept: the next run gets a fresh worktree of the branch.
        raise RunFailed(f"{error}; the next run starts from a fresh worktree") from None
    except WorkspaceError as error:
        raise RunFailed(f"commit failed: {error}") from None


def _feedback(ctx: JobContext) -> str:
    parts = []
    reviews = ctx.card.data.reviews
    if reviews:
        parts.append("The last review rejected the previous attempt:\n" + reviews[-1]["report"])
    for answer in ctx.card.data.answers:
        parts.append(f"Owner's clarification: {answer['question']} -> {answer['answer']}")
    checks = _failed_checks(ctx)
    if checks:
        parts.append(checks)
    return "\n\n".join(parts)


def _failed_checks(ctx: JobContext) -> str:
    """The checks that held the card's commit, for a fresh session after /retry or /fix:
    it starts on top of that commit and must know what still fails."""
    record = record_of(ctx.card.data.checks, ctx.card.commit_hash)
    if record is None or gate.passed(record):
        return ""
    return (
        f"The repository's checks failed on the last commit ({shown(record)}); "
        f"the end of their output:\n{record.get('tail') or '-'}"
    )


@dataclass
class Turns:
    """What a session of agent turns came to."""

    #: The final answer (it carries one of the role's final markers), or None.
    answer: str | None
    last_text: str
    #: Runs that ended without the final markers (the agent talked but did not finish).
    unfinished: int
    #: The session to resume, its usage so far, and the iterations (turns) left of the limit.
    session: str = ""
    usage: Usage | None = None
    left: int = 0


def iteration_limit(ctx: JobContext) -> int:
    card = ctx.card
    lane = ctx.config.lanes.get(card.lane or ctx.board.default_lane)
    if card.iteration_limit:
        return card.iteration_limit
    if lane is None:
        raise RunFailed(f"lane {card.lane!r} is not configured any more")
    return lane.iteration_limit


async def agent_turns(
    ctx: JobContext,
    first_prompt: str,
    worktree: Worktree,
    limit: int,
    markers: tuple[str, ...],
    *,
    resume: str | None = None,
    usage: Usage | None = None,
) -> Turns:
    """At most `limit` agent turns in one session, in total.

    A runtime without a turn limit of its own (codex) runs one iteration per run, and an
    unfinished one is resumed. One that bounds its turns itself (claude's `--max-turns`,
    `Runtime.bounds_turns`) gives a resumed run only the turns the earlier ones left, so
    the whole session stays within the limit instead of up to limit x limit turns.
    """
    profile = ctx.profile()
    record = RUNTIMES.get(profile.runtime)
    counts_turns = record is not None and record.bounds_turns
    # After /interrupt and /steer: the same session goes on with the owner's words;
    # after failed checks, the session that made the commit.
    session = _steered_session(ctx) if resume is None else resume
    last_text, turns_left, unfinished = "", limit, 0
    for iteration in range(limit):
        result = await ctx.run(
            first_prompt if iteration == 0 else prompts.builder_continue_prompt(),
            cwd=worktree.path,
            profile=profile,
            resume_session_id=session,
            max_turns=turns_left if counts_turns else None,
            previous_usage=usage,
            accept_turn_limit=True,
        )
        session = result.output.session_id or session
        usage = result.output.thread_usage or usage
        last_text = result.output.answer
        used = max(1, result.output.turns or turns_left) if counts_turns else 1
        turns_left -= min(turns_left, used)
        if result.output.turn_limit_reached:
            break
        if any(token in last_text for token in markers):
            # From the first final marker on, the answer must parse or the job fails.
            return Turns(last_text, last_text, unfinished, session, usage, turns_left)
        unfinished += 1
        if turns_left == 0:
            break
    return Turns(None, last_text, unfinished, session, usage, turns_left)


def _steered_session(ctx: JobContext) -> str:
    return str(ctx.payload.get("session") or "") if ctx.payload.get("steer") else ""


def _first_prompt(ctx: JobContext, fresh: str) -> str:
    """The prompt a job starts with: its own, or the owner's steer for a resumed session."""
    steer = str(ctx.payload.get("steer") or "")
    if not steer:
        return fresh
    if _steered_session(ctx):
        return prompts.steered_prompt(steer)
    # Interrupted before the CLI named its session: a fresh one, told what the owner said.
    return f"{fresh}\n\nThe owner adds:\n\n{steer.strip()}"


async def run_builder(ctx: JobContext) -> None:
    card = ctx.card
    limit = iteration_limit(ctx)
    worktree = await card_worktree(ctx)
    intent_path, body = ctx.intent()
    first_prompt = prompts.builder_prompt(
        slug=card.slug,
        intent_path=intent_path,
        intent_body=body,
        acceptance_criteria=card.acceptance_criteria,
        write_scope=card.write_scope,
        feedback=_feedback(ctx),
    )
    prompt = _first_prompt(ctx, first_prompt)
    done = await _checked(ctx, worktree, prompt, limit, _FINAL, parse_builder_answer)
    turns, answer, commit = done.turns, done.answer, done.commit
    if answer is None or commit is None:
        # Named, so an agent that talks but never finishes is not mistaken for a slow one.
        why = f"{turns.unfinished} answers without the commit-message block"
        await _limit_reached(ctx, limit, turns.last_text, why if turns.unfinished else "")
        return
    if not gate.passed(done.checks):
        assert done.checks is not None
        await gate.failed(ctx, Action.BUILD_FAILED, limit, commit, done.checks)
        return
    await _commit_and_review(
        ctx, worktree, answer, Action.BUILD_COMMITTED, commit, done.checks, limit_reached=False
    )


# Any of the final answer's markers: from then on the answer must parse, or it fails.
_FINAL = (COMMIT_MESSAGE.start, COMMIT_MESSAGE.end, BUILDER_REPORT.start)


async def _limit_reached(ctx: JobContext, limit: int, last_text: str, turns: str) -> None:
    card = ctx.card
    why = f" ({turns})" if turns else ""
    step = card.escalation_step
    if step < len(card.escalation):
        nxt = card.escalation[step]
        await ctx.apply(
            Action.BUILD_ESCALATED,
            reason=(
                f"iteration limit {limit} reached{why}; escalation step {step + 1}: "
                f"{nxt['model']} with limit {nxt['iteration_limit']}"
            ),
            details={"step": step + 1, "limit": limit},
            escalation_step=step + 1,
            model=nxt["model"],
            reasoning_effort=nxt.get("reasoning_effort") or "",
            iteration_limit=nxt["iteration_limit"],
        )
        return
    await ctx.apply(
        Action.BUILD_LIMIT_SPENT,
        answer_used=False,
        reason=f"iteration limit {limit} reached{why} and no escalation step left",
        details={"limit": limit},
        data=card.data.updated(limit_reached=True, builder_report=last_text[-4000:]),
    )


async def run_fixer(ctx: JobContext) -> None:
    """A repair in a fresh session, with the card's own profile and iteration limit."""
    card = ctx.card
    rounds = card.data.fixer_rounds
    rounds_left = max(0, MAX_FIXER_QUESTION_ROUNDS - rounds)
    limit = iteration_limit(ctx)
    worktree = await card_worktree(ctx)
    intent_path, body = ctx.intent()
    reviews = card.data.reviews
    history = [
        {"question": a["question"], "answer": a["answer"]}
        for a in card.data.answers
        if a["kind"] == "fixer"
    ]
    # Every comment not yet answered: those given to an earlier run that failed too.
    comments = await ctx.board.comments.unanswered(card)
    prompt = prompts.fixer_prompt(
        slug=card.slug,
        owner_comments=agent_view(comments),
        original_phase=(card.resume_phase.value if card.resume_phase else "failed"),
        attempt=max(1, card.fixer_attempts),
        intent_path=intent_path,
        intent_body=body,
        acceptance_criteria=card.acceptance_criteria,
        write_scope=card.write_scope,
        builder_report=card.data.builder_report,
        failure="\n\n".join(
            part
            for part in (
                f"{card.failure_stage or ''}: {card.failure_detail or ''}".strip(": "),
                _failed_checks(ctx),
            )
            if part
        ),
        review_report=reviews[-1]["report"] if reviews else "",
        commit_hash=card.commit_hash,
        question_history=history,
        question_rounds_left=rounds_left,
    )
    await ctx.board.comments.mark_sent(comments, ctx.job.id)
    final = (*_FINAL, FIXER_QUESTION.start)
    done = await _checked(
        ctx,
        worktree,
        _first_prompt(ctx, prompt),
        limit,
        final,
        lambda text: parse_fixer_answer(text, question_allowed=rounds_left > 0),
    )
    turns, answer = done.turns, done.answer
    if answer is None:
        why = (
            f" ({turns.unfinished} answers without a fix or a question)" if turns.unfinished else ""
        )
        raise RunFailed(f"iteration limit {limit} reached without a fix{why}")
    if isinstance(answer, FixerQuestion):
        await ctx.apply(
            Action.FIXER_ASKED,
            reason="the fixer asks",
            question=("fixer", answer.text, list(answer.options)),
            data=card.data.updated(fixer_rounds=rounds + 1),
        )
        return
    assert done.commit is not None
    if not gate.passed(done.checks):
        assert done.checks is not None
        await gate.failed(ctx, Action.FIXER_FAILED, limit, done.commit, done.checks)
        return
    await _commit_and_review(
        ctx, worktree, answer, Action.FIXER_COMMITTED, done.commit, done.checks, fixer_rounds=0
    )
