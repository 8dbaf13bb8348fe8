"""`/budget` and `/pipeline/<id>`: what chat's /budget and /runs <pipeline> say, as pages.

The same board reads feed them (BoardBudget.spend_report, BoardReads.pipeline_runs);
a pipeline's page adds its cards: the split parent, its children with their phases,
and the synthesis of the children when there is one.
"""

from __future__ import annotations

from collections.abc import Sequence

from chatbot.board import CardView, RunRecord, Spend, SpendReport
from chatbot.domain.counted import counted
from chatbot.notify.format import usd
from chatbot.web.markup import Safe, join, labelled_row, moment, scroll_table, tag
from chatbot.web.texts import Texts


def _spend_rows(found: Sequence[Spend], link: bool = False) -> list[Safe]:
    template = '<td><a href="/card/{name}">{name}</a></td>' if link else "<td>{name}</td>"
    return [
        tag(
            "<tr>" + template + "<td>{usd}</td><td>{runs}</td></tr>",
            name=s.name,
            usd=usd(s.usd),
            runs=s.runs,
        )
        for s in found
    ]


def budget_main(report: SpendReport, t: Texts, days: int = 7) -> Safe:
    today, day = report.today, report.day
    if day is not None:
        runs = counted(today.runs, "run", t.locale)
        head = t("budget_today", spent=usd(day.spent), limit=usd(day.limit), runs=runs)
        if day.reached:
            head += " " + t("budget_reached")
    else:
        runs = counted(today.runs, "run", t.locale)
        head = t("budget_today_free", spent=usd(today.usd), runs=runs)
    cols = (t("col_day"), t("col_cost"), t("col_runs"))
    period = counted(days, "day", t.locale)
    cards = [
        tag(
            '<tr><td><a href="/card/{name}">{name}</a></td><td>{usd}</td><td>{limit}</td>'
            "<td>{runs}</td></tr>",
            name=spent.name,
            usd=usd(spent.usd),
            limit=usd(state.limit) if state else "-",
            runs=spent.runs,
        )
        for spent, state in report.cards
    ]
    return tag(
        '<h1>{title}</h1><p id="today">{head}</p>'
        '<section id="per-day"><h2>{h_days}</h2>{days}</section>'
        '<section id="per-lane"><h2>{h_lanes}</h2>{lanes}</section>{roles}'
        '<section id="per-card"><h2>{h_cards}</h2>{cards}</section>',
        title=t("budget"),
        head=head,
        h_days=t("budget_days", days=period),
        days=scroll_table("days", cols, _spend_rows(report.days)),
        h_lanes=t("budget_lanes", days=period),
        lanes=scroll_table("lanes", (t("col_lane"), *cols[1:]), _spend_rows(report.lanes)),
        roles=_roles(report, t, period),
        h_cards=t("budget_cards"),
        cards=scroll_table(
            "cards",
            (t("col_card"), t("col_cost"), t("col_budget"), t("col_runs")),
            cards,
        ),
    )


def _roles(report: SpendReport, t: Texts, period: str) -> Safe:
    """The roles that run in a lane of their own, apart from the configured lanes."""
    if not report.roles:
        return Safe("")
    return tag(
        '<section id="per-role"><h2>{h}</h2>{table}</section>',
        h=t("budget_roles", days=period),
        table=scroll_table(
            "roles", (t("col_role"), t("col_cost"), t("col_runs")), _spend_rows(report.roles)
        ),
    )


def pipeline_main(
    pipeline: str, runs: Sequence[tuple[str, RunRecord]], views: Sequence[CardView], t: Texts
) -> Safe:
    """The pipeline's split parent and children (from `views`), its runs, the synthesis."""
    if not runs and not views:
        return tag('<p class="none">{m}</p>', m=t("pipeline_none", id=pipeline))
    parent = next((v for v in views if v.children), None)
    cards = [
        tag(
            '<li><a href="/card/{slug}">{slug}</a> · {phase}</li>',
            slug=v.card.slug,
            phase=v.card.phase.label(t.locale),
        )
        for v in views
        if v is not parent
    ]
    synthesis = Safe("")
    found = parent.card.data.synthesis if parent else None
    if found is not None:
        synthesis = tag(
            '<section id="synthesis"><h2>{h}</h2><p>{m}</p></section>',
            h=t("synthesis"),
            m=t(
                "synthesis_line",
                path=found["path"] or "-",
                gaps=counted(len(found["gaps"]), "gap", t.locale),
            ),
        )
    head = t("col_when"), t("col_card"), t("col_role"), t("col_model"), t("col_cost")
    heads = (*head, t("col_outcome"))
    rows = [
        labelled_row(
            heads,
            (
                moment(run.created_at),
                tag('<a href="/card/{slug}">{slug}</a>', slug=slug),
                run.role,
                run.actual_model or run.configured_model or "-",
                "-" if run.cost_usd is None else usd(run.cost_usd),
                run.shown_outcome,
            ),
        )
        for slug, run in runs
    ]
    total = sum(run.cost_usd or 0.0 for _, run in runs)
    return tag(
        '<h1>{title}</h1>{parent}<section id="children"><ul>{cards}</ul></section>{synthesis}'
        '<section id="runs"><h2>{h_runs}</h2>{table}</section>',
        title=t(
            "pipeline_title",
            id=pipeline,
            count=counted(len(runs), "run", t.locale),
            cost=usd(total),
        ),
        parent=tag(
            '<p id="parent">{m} <a href="/card/{slug}">{slug}</a></p>',
            m=t("parent"),
            slug=parent.card.slug,
        )
        if parent
        else Safe(""),
        cards=join(cards),
        synthesis=synthesis,
        h_runs=t("runs"),
        table=scroll_table("runs", heads, rows),
    )
