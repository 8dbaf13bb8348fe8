"""The board, one card, its history and the runs, as chat answers and as the shell's
`chatbot cards` / `chatbot card` text (one renderer; the shell shows everything).

Every sentence comes from the catalogue in `texts`, so the German locale shows
German everywhere. Long answers are cut at a line boundary (or, for one huge
line, at a character boundary that does not split a combining sequence) and say
how many lines were left out.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from chatbot.board import BoardSummary, Card, CardView, Job, QuestionRow, Request, RunRecord
from chatbot.board.agent_asks import AGENT
from chatbot.board.budget import budget_stopped
from chatbot.board.hand_over import HandOver
from chatbot.chat import reactions, render_files
from chatbot.chat.commands import (
    FOR_ACTION,
    INSPECT_MODES,
    PREFIX,
    SKIP_CHECKS,
    UsageProblem,
    shown_with,
)
from chatbot.chat.texts import CATALOGUES, say
from chatbot.domain import checks, ways
from chatbot.domain.action_labels import action_label
from chatbot.domain.counted import counted
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action, Stage
from chatbot.notify.format import duration, inert, inert_inline, one_line, prefix

SLUGS_PER_PHASE = 8

#: Matrix allows ~64 KiB per event and XMPP servers often 10 000 bytes per stanza;
#: a phone screen wants far less. This default stays well inside both.
MAX_CHARS = 3500
# Question text shown in one line of /status.
_SHORT = 100


def clip(text: str, locale: str, max_chars: int = MAX_CHARS) -> str:
    """Cut `text` to at most `max_chars`, at a line boundary, and say what was left out."""
    if len(text) <= max_chars:
        return text
    lines = text.split("\n")
    kept: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        note = say(locale, "clipped", count=counted(len(lines) - index, "more line", locale))
        room = max_chars - len(note) - 1  # the note and its line break
        needed = len(line) + (1 if kept else 0)
        if used + needed <= room:
            kept.append(line)
            used += needed
            continue
        if not kept:
            # The first line alone is too long: cut inside it, and count characters.
            widest = _chars_left(len(text), locale)  # the most digits
            head = prefix(line, max(0, max_chars - len(widest) - 2))
            note = _chars_left(len(text) - len(head), locale)
            kept.append(head + "…")
        return "\n".join([*kept, note])
    return "\n".join(kept)  # not reached: the text is longer than the room


def _chars_left(chars: int, locale: str) -> str:
    return say(locale, "clipped_chars", count=counted(chars, "more character", locale))


def when(at: float, *, seconds: bool = False) -> str:
    """A moment as every reader of the bot's texts sees it: UTC, to the minute (a file
    of the history, read beside logs, to the second)."""
    shape = "%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC"
    return datetime.fromtimestamp(at, UTC).strftime(shape)


def short(text: str, limit: int = _SHORT) -> str:
    return one_line(text, limit)


def allowed_commands(actions: list[Action], locale: str) -> str:
    names = [f"/{FOR_ACTION[a].name}" for a in actions if a in FOR_ACTION]
    return ", ".join(names) if names else say(locale, "allowed_nothing")


def board(
    summary: BoardSummary,
    questions: list[tuple[str, QuestionRow]],
    requests: list[Request],
    job_slugs: dict[int, str],
    locale: str,
    now: float | None = None,
    slugs_per_phase: int | None = SLUGS_PER_PHASE,
) -> str:
    """/status: counts per phase, running jobs, open questions and requests, then the cards.

    The cards by phase come last: on a big board they are what gets cut. The shell
    (`chatbot cards`) shows the same, with every slug (`slugs_per_phase=None`).
    """
    if not summary.total and not requests:
        return say(locale, "status_empty")
    now = time.time() if now is None else now
    lines = [say(locale, "status_total", total=counted(summary.total, "card", locale))]
    phases = [p for p in Phase if summary.counts.get(p)]
    lines += [
        say(locale, "status_phase", phase=p.label(locale), count=summary.counts[p]) for p in phases
    ]
    if summary.active_jobs:
        lines.append(say(locale, "status_jobs", count=len(summary.active_jobs)))
        lines += [_job_line(j, job_slugs, locale, now) for j in summary.active_jobs]
    else:
        lines.append(say(locale, "runs_none"))
    if questions:
        lines.append(say(locale, "status_questions", count=len(questions)))
        lines += [
            say(locale, "status_question", slug=slug, id=q.id, text=short(q.text))
            for slug, q in questions
        ]
    if requests:
        lines.append(say(locale, "status_requests", count=len(requests)))
        lines += [
            say(
                locale,
                "status_request",
                id=r.id,
                command=f"/{r.command} {short(r.argument, 60)}",
                requester=r.requester,
            )
            for r in requests
        ]
    if summary.cards_by_phase:
        lines.append(say(locale, "status_cards"))
        for phase in phases:
            slugs = summary.cards_by_phase.get(phase, [])
            # A phone screen, not a dump: a few names per phase, the rest counted.
            shown = ", ".join(slugs[:slugs_per_phase])
            if slugs_per_phase is not None and len(slugs) > slugs_per_phase:
                shown += f", … (+{len(slugs) - slugs_per_phase})"
            lines.append(f"{phase.label(locale)}: {shown}")
    return "\n".join(lines)


def runs(jobs: list[Job], job_slugs: dict[int, str], locale: str, now: float | None = None) -> str:
    """/runs: the queued and running jobs."""
    if not jobs:
        return say(locale, "runs_none")
    now = time.time() if now is None else now
    lines = [say(locale, "status_jobs", count=len(jobs))]
    lines += [_job_line(j, job_slugs, locale, now) for j in jobs]
    return "\n".join(lines)


def _job_line(job: Job, job_slugs: dict[int, str], locale: str, now: float) -> str:
    since = job.started_at or job.created_at
    line = say(
        locale,
        "job_line",
        id=job.id,
        kind=job.kind,
        slug=job_slugs.get(job.card_id or -1, "-"),
        state=say(locale, f"job_{job.state.value}"),
        lane=job.lane,
        age=duration(now - since),
    )
    if job.host and job.state.value == "running":
        # Workers on several hosts: where to look for the agent process.
        return say(locale, "job_on_host", line=line, host=job.host)
    return line


def card(view: CardView, runs: list[RunRecord], locale: str) -> str:
    """/status <slug>: where the card is, what ran, what waits for the owner."""
    c = view.card
    lines = [
        say(locale, "card_title", slug=c.slug, title=c.title or "-"),
        say(locale, "card_phase", kind=c.kind.value, phase=c.phase.label(locale)),
    ]
    if c.lane or c.runtime or c.model:
        lines.append(say(locale, "card_lane", lane=c.lane or "-", profile=_profile(c)))
    if view.parent:
        lines.append(say(locale, "card_parent", slug=view.parent))
    if view.children:
        lines.append(say(locale, "card_children", slugs=", ".join(view.children)))
    if view.blocked_by:
        lines.append(say(locale, "card_blocked", slugs=", ".join(view.blocked_by)))
    if c.pipeline_run_id:
        lines.append(say(locale, "card_pipeline", id=c.pipeline_run_id))
    if c.acceptance_criteria:
        lines.append(say(locale, "card_criteria"))
        lines += [say(locale, "card_criterion", text=short(text)) for text in c.acceptance_criteria]
    if view.active_job:
        job = view.active_job
        lines.append(
            say(locale, "card_job", kind=job.kind, state=say(locale, f"job_{job.state.value}"))
        )
    if c.failure_stage or c.failure_detail:
        lines.append(
            say(locale, "card_failure", stage=c.failure_stage or "-", detail=c.failure_detail or "")
        )
    ways_on = ways_forward(c, locale)
    if ways_on and budget_stopped(c) is None:  # a budget stop's own line names its way on
        shown = "; ".join(f"{command} {text}" for _, command, text in ways_on)
        lines.append(say(locale, "card_ways", ways=shown))
    if c.commit_hash:
        lines.append(say(locale, "card_commit", commit=c.commit_hash))
    lines += checks_line(c, locale)
    if c.review_decision:
        lines.append(
            say(locale, "card_review", decision=c.review_decision, path=c.review_report_path or "-")
        )
    research = c.data.research_report
    if research:
        lines.append(say(locale, "card_research", path=research))
    if c.deployment_status:
        lines.append(say(locale, "card_deploy", status=c.deployment_status))
    lines += card_extras(c, locale)
    lines += render_files.card_files(view.attachments, locale)
    if view.open_question:
        question = view.open_question
        if question.kind == AGENT:
            # A working agent's words: inert, as its post shows them.
            lines.append(say(locale, "card_question", id=question.id, text=inert(question.text)))
            lines += [f"  {n}. {inert_inline(o)}" for n, o in enumerate(question.options, 1)]
        else:
            lines.append(say(locale, "card_question", id=question.id, text=question.text))
            lines += [f"  {n}. {option}" for n, option in enumerate(question.options, 1)]
    recommendation = reactions.pending_recommendation(c)
    if recommendation:
        lines.append(say(locale, "card_recommendation", target=recommendation))
    if reactions.split_offered(c):
        lines.append(say(locale, "card_split_offer", slug=c.slug))
    lines.append(say(locale, "card_runs") if runs else say(locale, "card_no_runs"))
    lines += [_run_line(r, locale) for r in runs]
    return "\n".join(lines)


def ways_forward(c: Card, locale: str, prefix: str = PREFIX) -> list[tuple[Action, str, str]]:
    """(action, command, what it does) for each way on from a failed card, as the chat
    names them; the command written with `prefix`."""
    found = []
    budget = budget_stopped(c) is not None
    for action in ways.ways_forward(c.phase, c.failure_stage, budget_stopped=budget):
        command = FOR_ACTION[action]
        # --skip-checks is a way on only where the checks held the card.
        held = c.failure_stage == Stage.CHECKS.value
        args = [a.usage for a in command.args[1:] if a is not SKIP_CHECKS or held]
        words = [f"{PREFIX}{command.name}", c.slug, *args]
        group = "budget" if budget else c.phase.value
        key = f"way_{group}_{action.value}"
        back = c.resume_phase.label(locale) if c.resume_phase else "-"
        text = say(locale, key if key in CATALOGUES["en"] else f"way_{action.value}", back=back)
        found.append((action, shown_with(" ".join(words), prefix), text))
    return found


def _profile(c: Card) -> str:
    parts = [c.runtime or "-", c.model or "", c.reasoning_effort or ""]
    return " ".join(p for p in parts if p)


def _run_line(run: RunRecord, locale: str) -> str:
    return say(locale, "run_line", **run_fields(run, locale))


def run_fields(run: RunRecord, locale: str) -> dict[str, str]:
    """A run as a line shows it: the model with the effort it really ran with, how its
    answer was taken (a refused one is not "ok"), the review decision it gave."""
    tokens = [run.input_tokens, run.output_tokens]
    shown_tokens = (
        say(locale, "tokens", input=run.input_tokens or 0, output=run.output_tokens or 0)
        if any(t is not None for t in tokens)
        else say(locale, "tokens_unknown")
    )
    model = run.actual_model or run.configured_model or run.runtime
    if run.actual_reasoning_effort:
        model += f" {run.actual_reasoning_effort}"
    outcome = run.shown_outcome
    if run.review_decision:
        outcome += f" ({run.review_decision})"
    if run.steers:
        outcome += ", " + say(locale, "run_steers", count=run.steers)
    cost = "-"
    if run.cost_usd is not None:
        cost = ("~" if run.cost_estimated else "") + f"${run.cost_usd:.2f}"
    return {
        "at": when(run.created_at),
        "role": run.role,
        "model": model,
        "outcome": outcome,
        "duration": duration(run.duration_s),
        "tokens": shown_tokens,
        "cost": cost,
    }


def hand_over(given: HandOver, locale: str) -> str:
    """/status <slug>: the agent's session and how a person continues it in a terminal."""
    lines = [
        say(locale, "card_session", session=given.session, role=given.role, runtime=given.runtime),
        say(locale, "card_worktree", path=str(given.worktree)),
    ]
    if given.command:
        lines.append(say(locale, "card_resume", command=given.command))
    else:
        lines.append(say(locale, "card_resume_none", runtime=given.runtime))
    return "\n".join(lines)


# /status shows the last lines of the checks' output: a phone screen, not a log.
CHECKS_TAIL_LINES = 12


def checks_line(c: Card, locale: str) -> list[str]:
    """The repository's checks of the card's commit: verdict, duration, the output's end
    (its last lines: the whole tail is on the card page and in `card --json`)."""
    record = checks.record_of(c.data.checks, c.commit_hash)
    if record is None:
        return []
    tail = "\n".join(str(record.get("tail") or "").splitlines()[-CHECKS_TAIL_LINES:])
    return [
        say(
            locale,
            "card_checks",
            verdict=record.get("verdict"),
            seconds=f"{float(record.get('duration_s') or 0):.1f}",
            command=short(" ".join(map(str, record.get("command") or ()))),
            tail=inert(tail or "-"),
        )
    ]


def card_extras(c: Card, locale: str) -> list[str]:
    """The repair attempts, the synthesis of a split, a stop by the budget."""
    lines = []
    if c.fixer_attempts:
        lines.append(say(locale, "card_fixer_attempts", count=c.fixer_attempts))
    synthesis = c.data.synthesis
    if synthesis is not None:
        found = counted(len(synthesis["gaps"]), "gap", locale)
        lines.append(say(locale, "card_synthesis", path=synthesis["path"], count=found))
    stop = budget_stopped(c)
    if stop is not None:
        spent, limit = f"${stop['spent']:.2f}", f"${stop['limit']:.2f}"
        lines.append(say(locale, "card_budget_stop", slug=c.slug, spent=spent, limit=limit))
    return lines


def history(view: CardView, locale: str) -> str:
    """/log <slug>: every event of the card, oldest first."""
    events = counted(len(view.events), "event", locale)
    lines = [say(locale, "log_header", slug=view.card.slug, count=events)]
    for event in view.events:
        source = event.from_phase.label(locale) if event.from_phase else "-"
        line = say(
            locale,
            "log_line",
            at=when(event.at),
            source=source,
            target=event.to_phase.label(locale),
            action=action_label(event.action, locale),
            actor=event.actor,
        )
        lines.append(f"{line} {event.reason}".rstrip() if event.reason else line)
    return "\n".join(lines)


def inspect_mode(choice: str | None) -> str:
    return INSPECT_MODES[choice or "status"]


# --- usage lines (/help itself is in render_help.py) ----------------------------


def usage_problem(problem: UsageProblem, locale: str) -> str:
    """What is wrong, then the usage line (or where to find the commands)."""
    if problem.command is None:
        text = say(locale, "problem_unknown_command", name=shown(problem.value))
        if problem.suggestions:
            choices = ", ".join(f"/{s}" for s in problem.suggestions)
            text += " " + say(locale, "did_you_mean", choices=choices)
        return text + " " + say(locale, "see_help")
    command = problem.command
    choices = next(("|".join(a.choices) for a in command.args if a.choices), "")
    text = say(
        locale, f"problem_{problem.problem.value}", value=shown(problem.value), choices=choices
    )
    return text + " " + say(locale, "usage", usage=command.usage)


#: How much of a word the sender typed is echoed back in a refusal.
SHOWN_CHARS = 40
# Control characters (ESC, NUL, ...) and the bidi overrides that make text read differently.
_UNSHOWN = {*map(chr, range(0x20)), "\x7f", *map(chr, range(0x80, 0xA0))}
_UNSHOWN |= {*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}


def shown(value: str) -> str:
    """A word from the sender, fit to quote back: no control characters, short, one line.

    A refusal that echoed ESC or NUL put terminal escapes into the room (and
    broke the XMPP stream, which cannot carry them).
    """
    cleaned = "".join(" " if char in _UNSHOWN else char for char in value)
    return short(cleaned, SHOWN_CHARS)
