"""One card: intent and reports rendered from markdown, the open question, runs, history.

The texts come from the repository and from models: markdown is rendered with raw
HTML off (markup.markdown), everything else is escaped. Long files are cut and
say so, so a runaway report cannot make the page unusable on a phone.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatbot.board import CardView, LineComment, RunRecord, TalkRow
from chatbot.board.hand_over import HandOver
from chatbot.board.inbox import Why
from chatbot.domain import checks
from chatbot.domain.action_labels import action_label
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.shown import visible
from chatbot.web import action_forms, diff_section, files_section, talk_section, why_line
from chatbot.web.markup import Safe, join, labelled_row, markdown, moment, scroll_table, tag
from chatbot.web.texts import Texts
from runners.diff_files import CommitDiff

# Characters of an intent or report rendered on the page.
MAX_TEXT = 200_000


@dataclass(frozen=True)
class RepoText:
    """A file of the repository as the page shows it: its path, and its text if present."""

    path: str
    text: str | None
    cut: bool = False


@dataclass(frozen=True)
class CardPage:
    view: CardView
    runs: Sequence[RunRecord]
    intent: RepoText
    research: RepoText | None = None
    # (commit, decision, report) of each review, newest first.
    reviews: Sequence[tuple[str, str, str]] = field(default_factory=list)
    # What its agents were told and asked, newest first; and its session to hand over.
    talk: Sequence[TalkRow] = field(default_factory=list)
    hand_over: HandOver | None = None
    # What holds it first, as /why says it.
    why: Why | None = None
    # The signed-in owner looking (None: a reader with the token), and whether the
    # browser's owner session has ended since.
    owner: action_forms.Owner | None = None
    session_ended: bool = False
    # Its change file by file (None: no commit yet), or why it cannot be shown.
    change: CommitDiff | None = None
    change_problem: str | None = None
    # The change's section as rendered once for its commit, if kept (change_cache.py).
    change_html: Safe | None = None
    # Its line comments, and (for a signed-in owner) the comment forms' token and the
    # line picked in the address.
    comments: Sequence[LineComment] = field(default_factory=list)
    picked: tuple[int, int] | None = None
    # A split parent's children done (as its split counts them) and all of them.
    split: tuple[int, int] | None = None


def _rendered(text: RepoText, t: Texts, missing_key: str) -> Safe:
    if text.text is None:
        return tag('<p class="none">{m}</p>', m=t(missing_key, path=text.path))
    note = Safe("")
    if text.cut:
        note = tag('<p class="cut">{m}</p>', m=t("cut", n=f"{MAX_TEXT:,}", path=text.path))
    return tag('<div class="md">{body}</div>{note}', body=markdown(text.text), note=note)


def _links(slugs: Sequence[str]) -> Safe:
    return join((tag('<a href="/card/{s}">{s}</a>', s=slug) for slug in slugs), ", ")


def _number(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def _cost(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _runs(runs: Sequence[RunRecord], t: Texts) -> Safe:
    if not runs:
        return tag('<p class="none">{m}</p>', m=t("no_runs"))
    keys = ("col_when", "col_role", "col_runtime", "col_model", "col_duration", "col_tokens")
    heads = [t(k) for k in (*keys, "col_cost", "col_outcome")]
    rows = []
    for run in runs:
        model = run.actual_model or run.configured_model or "-"
        if run.actual_reasoning_effort:
            model += f" ({run.actual_reasoning_effort})"
        tokens = " / ".join(
            _number(v) for v in (run.input_tokens, run.cached_tokens, run.output_tokens)
        )
        cells = (
            moment(run.created_at),
            run.role,
            run.runtime,
            model,
            _duration(run.duration_s),
            tokens,
            _cost(run.cost_usd),
            run.shown_outcome,
        )
        rows.append(labelled_row(heads, cells))
    return scroll_table("runs", heads, rows)


def _history(view: CardView, t: Texts) -> Safe:
    keys = ("col_step", "col_when", "col_move", "col_action", "col_actor", "col_reason")
    heads = [t(k) for k in keys]
    rows = [
        labelled_row(
            heads,
            (
                event.seq,
                moment(event.at),
                (f"{event.from_phase.label(t.locale)} → " if event.from_phase else "→ ")
                + event.to_phase.label(t.locale),
                action_label(event.action, t.locale),
                event.actor,
                event.reason,
            ),
        )
        for event in reversed(view.events)
    ]
    return scroll_table("history", heads, rows)


def _conversation(turns: list[Any], t: Texts) -> Safe:
    """A draft has no intent file yet: its intake dialogue is what there is to read."""
    items = [
        tag("<dt>{who}</dt><dd>{text}</dd>", who=turn[0], text=turn[1])
        for turn in turns
        if isinstance(turn, list | tuple) and len(turn) == 2
    ]
    return tag(
        '<section id="conversation"><h2>{h}</h2><dl class="conversation">{items}</dl></section>',
        h=t("conversation"),
        items=join(items),
    )


def _question(view: CardView, t: Texts) -> Safe:
    question = view.open_question
    if question is None:
        return Safe("")
    options = Safe("")
    if question.options:
        options = tag(
            '<ol class="options">{items}</ol>',
            items=join(tag("<li>{o}</li>", o=option) for option in question.options),
        )
    return tag(
        '<section class="question" id="question"><h2>{label}</h2><p class="qtext">{text}</p>'
        "{options}</section>",
        label=t("question"),
        # A working agent's words: every invisible character shown (escaping does the rest).
        text=visible(question.text) if question.kind == "agent" else question.text,
        options=options,
    )


def _answers(given: Sequence[Mapping[str, Any]], t: Texts) -> Safe:
    """What owners answered the card's questions (in chat or here), as text."""
    if not given:
        return Safe("")
    items = [
        tag(
            "<dt>{q}</dt><dd>{a} <small>({by})</small></dd>",
            q=str(a.get("question") or "-"),
            a=str(a.get("answer") or ""),
            by=str(a.get("by") or "-"),
        )
        for a in given
    ]
    return tag(
        '<section id="answers"><h2>{h}</h2><dl class="answers">{items}</dl></section>',
        h=t("answers"),
        items=join(items),
    )


def _checks(kept: Mapping[str, Any] | None, commit: str | None, t: Texts) -> Safe:
    """The repository's checks of the card's commit: verdict, duration, the output's end."""
    record = checks.record_of(kept, commit)
    if record is None:
        return Safe("")
    return tag(
        '<details class="checks checks-{verdict}" id="checks"><summary>{m}</summary>'
        "<p>{label}</p><pre>{tail}</pre></details>",
        verdict=str(record.get("verdict")),
        m=t(
            "checks",
            commit=str(commit)[:12],
            verdict=str(record.get("verdict")),
            seconds=f"{float(record.get('duration_s') or 0):.1f}",
            command=" ".join(map(str, record.get("command") or ())),
        ),
        label=t("checks_output"),
        tail=str(record.get("tail") or "-"),
    )


def card_main(page: CardPage, t: Texts, now: float | None = None) -> Safe:
    now = time.time() if now is None else now
    view, card = page.view, page.view.card
    facts = [t("kind_phase", kind=card.kind.value, phase=card.phase.label(t.locale))]
    if card.phase is Phase.SPLIT and page.split and page.split[1]:
        facts.append(t("split_waits", done=page.split[0], total=page.split[1]))
    if card.lane:
        facts.append(t("lane", lane=card.lane))
    if card.model:
        facts.append(f"{card.runtime or '-'} {card.model}")
    if card.commit_hash:
        facts.append(card.commit_hash[:12])
    if card.pipeline_run_id:
        facts.append(t("pipeline", id=card.pipeline_run_id))
    parts: list[Safe] = [
        tag(
            '<h1><span class="title">{title}</span> <small class="slug">{slug}</small></h1>'
            '<p class="facts" id="facts">{facts}</p>',
            title=card.title,
            slug=card.slug,
            facts=" · ".join(facts),
        ),
        why_line.why_line(page.why, t),
    ]
    if card.failure_stage:
        parts.append(
            tag(
                '<p class="failure">{m}</p>',
                m=t("failure", stage=card.failure_stage, detail=card.failure_detail or "-"),
            )
        )
    parts.append(_checks(card.data.checks, card.commit_hash, t))
    if card.pipeline_run_id:
        parts.append(
            tag(
                '<p class="pipeline"><a href="/pipeline/{id}">{m}</a></p>',
                id=card.pipeline_run_id,
                m=t("pipeline_open", id=card.pipeline_run_id),
            )
        )
    if page.session_ended:
        parts.append(tag('<p class="message" id="session-ended">{m}</p>', m=t("session_ended")))
    parts.append(_question(view, t))
    parts.append(action_forms.section(view, page.talk, page.owner, t))
    parts.append(_answers(card.data.answers, t))
    parts.append(talk_section.approvals(page.talk, t))
    relations = [
        (key, slugs)
        for key, slugs in (
            ("parent", [view.parent] if view.parent else []),
            ("children", view.children),
            ("blocked_by", view.blocked_by),
        )
        if slugs
    ]
    if relations:
        parts.append(
            tag(
                '<dl class="relations">{items}</dl>',
                items=join(
                    tag("<dt>{k}</dt><dd>{v}</dd>", k=t(key), v=_links(slugs))
                    for key, slugs in relations
                ),
            )
        )
    if card.kind is Kind.DRAFT and card.data.conversation:
        parts.append(_conversation(card.data.conversation, t))
    else:
        parts.append(
            tag(
                '<section id="intent"><h2>{h}</h2>{body}</section>',
                h=t("intent"),
                body=_rendered(page.intent, t, "intent_missing"),
            )
        )
    if card.acceptance_criteria:
        # What the operator set this split child to meet; its builder and reviewer see them.
        parts.append(
            tag(
                '<section id="criteria"><h2>{h}</h2><ul class="criteria">{items}</ul></section>',
                h=t("criteria"),
                items=join(tag("<li>{c}</li>", c=c) for c in card.acceptance_criteria),
            )
        )
    parts.append(files_section.files_section(view.attachments, t))
    if page.reviews:
        reviews = [
            tag(
                '<article class="review"><h3>{head}</h3><div class="md">{body}</div></article>',
                head=t("review_of", decision=decision, commit=commit[:12]),
                body=markdown(report[:MAX_TEXT]),
            )
            for commit, decision, report in page.reviews
        ]
        parts.append(
            tag(
                '<section id="reviews"><h2>{h}</h2>{items}</section>',
                h=t("reviews"),
                items=join(reviews),
            )
        )
    if page.change is not None:
        # The section is the commit's (kept per commit: change_cache.py); the form
        # and the comments are this page's.
        section = page.change_html
        if section is None:
            section = diff_section.change_section(page.change, card.slug, t)
        parts.append(section)
        if page.owner is not None:
            commenting = diff_section.Commenting(page.owner.csrf, page.picked)
            parts.append(diff_section.comment_form(card.slug, page.change, commenting, t))
        parts.append(diff_section.comments_list(page.comments, t))
    elif page.change_problem:
        parts.append(
            tag(
                '<section id="change"><h2>{h}</h2><p class="none">{m}</p></section>',
                h=t("change"),
                m=t("change_missing", why=page.change_problem),
            )
        )
    if page.research is not None:
        parts.append(
            tag(
                '<section id="research"><h2>{h}</h2>{body}</section>',
                h=t("research"),
                body=_rendered(page.research, t, "research_missing"),
            )
        )
    parts.append(talk_section.hand_over(page.hand_over, t))
    parts.append(
        tag('<section id="runs"><h2>{h}</h2>{b}</section>', h=t("runs"), b=_runs(page.runs, t))
    )
    parts.append(
        tag(
            '<section id="history"><h2>{h}</h2>{b}</section>',
            h=t("history"),
            b=_history(view, t),
        )
    )
    return join(parts)


def reviews_of(
    reviews: Sequence[Mapping[str, Any]], report_file: RepoText | None
) -> list[tuple[str, str, str]]:
    """Reviews kept in the card's data (each with its report), newest first; or the report
    file alone for a card reviewed before the board kept them."""
    found = [
        (entry["commit"] or "-", entry["decision"] or "-", entry["report"])
        for entry in reversed(reviews)
    ]
    if not found and report_file is not None and report_file.text is not None:
        found.append(("-", "-", report_file.text))
    return found
