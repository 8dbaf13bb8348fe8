"""The repository's checks as a gate between a builder's or fixer's commit and its review.

Which command (the intent's `Checks:` line, else `[checks] command`), run in the
card's worktree inside the agents' sandbox, and what the card keeps of the result:
`CardData.checks`, one record per commit (verdict, duration, the output's tail), which
the reviewer's prompt, /status, the card page, `card --json` and /deploy read.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from chatbot.board import checks_record
from chatbot.board.importer import scan
from chatbot.board.run_events import ChecksFinished, ChecksSentBack
from chatbot.config import Config
from chatbot.domain.checks import GOOD_VERDICTS, shown
from chatbot.domain.transitions import Action, Stage
from chatbot.pipeline import sandboxing
from chatbot.pipeline.context import JobContext, RunFailed
from runners import prompts
from runners.checks import (
    ChecksResult,
    Verdict,
    intent_line,
    program_problem,
    resolve_program,
    run_checks,
)
from runners.workspace import Worktree

log = logging.getLogger(__name__)
AnswerT = TypeVar("AnswerT")


@dataclass
class Checked(Generic[AnswerT]):
    """Turns that ended in an answer (or not), its commit and the checks' record of it."""

    turns: Any  # building.Turns
    answer: AnswerT | None
    commit: str | None
    checks: dict[str, object] | None


async def failed(
    ctx: JobContext, action: Action, limit: int, commit: str, record: dict[str, object]
) -> None:
    """The iterations are spent and the last commit still fails its checks: the card fails
    at stage "checks", its commit kept for /retry, /fix or /retry --skip-checks."""
    slug = ctx.card.slug
    await ctx.apply(
        action,
        answer_used=False,
        reason=f"checks {record['verdict']} on commit {commit[:12]} after {limit} iterations",
        details={"commit": commit, "checks": record["verdict"], "limit": limit},
        commit_hash=commit,
        review_decision=None,
        review_report_path=None,
        deployment_status=None,
        failure_stage=Stage.CHECKS.value,
        failure_detail=(
            f"checks {shown(record)} on {commit[:12]} after the iteration limit {limit}; "
            f"/retry {slug} --skip-checks to go on without them once"
        ),
        data=ctx.card.data.updated(checks=checks_record(record)),
    )


def command_for(ctx: JobContext) -> list[str] | None:
    """The card's checks command, or None: no checks for it."""
    _, body = ctx.intent()
    try:
        line = intent_line(body)
    except ValueError as error:
        raise RunFailed(str(error)) from None
    if line is not None:
        return line[1]  # the intent's own command, or None for "Checks: none"
    return list(ctx.config.checks.command) or None


async def check(ctx: JobContext, worktree: Worktree, commit: str) -> dict[str, Any] | None:
    """Run the card's checks on `commit` (checked out in `worktree`); the record the
    card keeps, or None when no checks are set for it."""
    command = command_for(ctx)
    if command is None:
        return None
    if ctx.payload.get("skip_checks"):
        # The owner's /retry <slug> --skip-checks: this run's commits go on unchecked.
        skipped = ChecksResult(Verdict.SKIPPED, 0.0, "skipped once by the owner")
        record = skipped.record(commit, command)
        await ctx.tell(ChecksFinished(ctx.card, record))
        return record
    settings = ctx.config.checks
    program = resolve_program(command[0], worktree.path)
    sandbox = (
        sandboxing.for_checks(ctx.config, worktree.path, program) if program is not None else None
    )
    result = await run_checks(
        command,
        worktree.path,
        timeout_s=settings.timeout_s,
        tail_chars=settings.tail_chars,
        sandbox=sandbox,
    )
    log.info(
        "checks of %s at %s: %s in %.2f s%s",
        ctx.card.slug,
        commit[:12],
        result.verdict.value,
        result.duration_s,
        "" if sandbox else " (no sandbox)",
    )
    record = result.record(commit, command)
    # /metrics counts them by verdict (web/metrics.py).
    await ctx.tell(ChecksFinished(ctx.card, record))
    return record


def passed(record: Mapping[str, Any] | None) -> bool:
    """The commit may go on to its review: no checks, passed, or skipped by the owner."""
    return record is None or record.get("verdict") in GOOD_VERDICTS


async def sent_back(ctx: JobContext, record: dict[str, Any], iteration: int, limit: int) -> None:
    """The checks failed and the agent gets iteration `iteration` of `limit`: the card's
    rooms hear it (notify/runs.py), so nobody waits on a run that quietly goes round."""
    await ctx.tell(ChecksSentBack(ctx.card, record, ctx.job.kind, iteration, limit))


def next_prompt(record: dict[str, Any]) -> str:
    """The agent's next iteration after checks that failed: their tail, bounded."""
    return prompts.checks_failed_prompt(record["command"], record["verdict"], record["tail"])


def for_reviewer(record: Mapping[str, Any] | None) -> str:
    """What the reviewer's prompt says of the checks ("" : none were set)."""
    if not record:
        return ""
    return f"{shown(record)}\n\n{record.get('tail') or '(no output)'}"


def check_lines(config: Config) -> list[tuple[str, bool]]:
    """What `chatbot check` says of the checks: the command of [checks] and of every
    intent's `Checks:` line, each a program that exists and is executable (a path is
    taken in the repository's checkout, as in a card's worktree)."""
    repo = config.bot.checkout
    found: list[tuple[str, bool]] = []
    command = list(config.checks.command)
    where = "inside the agents' sandbox" if sandboxing.tool(config) else "WITHOUT a sandbox"
    if command:
        problem = program_problem(command, repo)
        line = (
            f"checks: {shlex.join(command)} after each builder or fixer commit, {where}, "
            f"stopped after {config.checks.timeout_s} s"
        )
        found.append((f"{line}: {problem}" if problem else line, problem is None))
    else:
        found.append(
            ("checks: none ([checks] command = [...] runs the tests on each commit)", True)
        )
    files, _ = scan(repo) if repo.is_dir() else ([], [])
    for intent in files:
        try:
            checks_line = intent_line((repo / intent.path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue  # the import says why
        except ValueError as error:
            found.append((f"  {intent.path}: {error}", False))
            continue
        if checks_line is None or checks_line[1] is None:
            continue
        problem = program_problem(checks_line[1], repo)
        said = f"  {intent.path}: Checks: {shlex.join(checks_line[1])}"
        found.append((f"{said}: {problem}" if problem else said, problem is None))
    return found
