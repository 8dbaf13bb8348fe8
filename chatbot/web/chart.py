"""Runs and cost per day as inline SVG: no chart library, nothing loaded from elsewhere.

Bars are the number of runs (left scale), dots joined by a line the cost (right
scale). Colours come from the stylesheet (classes), never from style attributes,
which the Content-Security-Policy would refuse.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta

from chatbot.board.web_reads import DayRuns
from chatbot.domain.counted import counted
from chatbot.web.markup import Safe, join, tag
from chatbot.web.texts import Texts

WIDTH, HEIGHT = 420, 170
LEFT, RIGHT, TOP, BOTTOM = 34, 44, 12, 26


def _days(count: int, now: float) -> list[str]:
    today = datetime.fromtimestamp(now).date()
    return [(today - timedelta(days=back)).isoformat() for back in range(count - 1, -1, -1)]


def _money(value: float) -> str:
    return f"${value:.2f}" if value >= 1 or value == 0 else f"${value:.3f}"


def runs_chart(rows: Sequence[DayRuns], days: int, t: Texts, now: float) -> Safe:
    by_day = {row.day: row for row in rows}
    axis = _days(days, now)
    runs = [by_day[d].runs if d in by_day else 0 for d in axis]
    costs = [by_day[d].cost_usd if d in by_day else 0.0 for d in axis]
    top_runs = max(max(runs), 1)
    top_cost = max(costs)
    # All free: the cost line lies on the axis, and the scale says $0.00.
    cost_scale = top_cost if top_cost > 0 else 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = plot_w / days
    base = TOP + plot_h
    parts: list[Safe] = [
        tag(
            '<line class="axis" x1="{x1}" y1="{y}" x2="{x2}" y2="{y}"/>',
            x1=LEFT,
            x2=WIDTH - RIGHT,
            y=base,
        ),
        tag(
            '<text class="scale" x="{x}" y="{y}" text-anchor="end">{v}</text>',
            x=LEFT - 4,
            y=TOP + 8,
            v=top_runs,
        ),
        tag(
            '<text class="scale" x="{x}" y="{y}" text-anchor="start">{v}</text>',
            x=WIDTH - RIGHT + 4,
            y=TOP + 8,
            v=_money(top_cost),
        ),
    ]
    points = []
    for index, (day, count, cost) in enumerate(zip(axis, runs, costs, strict=True)):
        x = LEFT + index * step
        height = plot_h * count / top_runs
        runs_on = counted(count, "run", t.locale)
        label = t("chart_label", runs=runs_on, cost=_money(cost), day=day)
        parts.append(
            tag(
                '<rect class="bar" x="{x}" y="{y}" width="{w}" height="{h}"><title>{label}'
                "</title></rect>",
                x=f"{x + step * 0.15:.1f}",
                y=f"{base - height:.1f}",
                w=f"{step * 0.7:.1f}",
                h=f"{height:.1f}",
                label=label,
            )
        )
        cx, cy = x + step / 2, base - plot_h * cost / cost_scale
        points.append(f"{cx:.1f},{cy:.1f}")
        parts.append(
            tag('<circle class="dot" cx="{x}" cy="{y}" r="2.5"/>', x=f"{cx:.1f}", y=f"{cy:.1f}")
        )
        if index % 2 == (days - 1) % 2:  # every other day, ending today
            parts.append(
                tag(
                    '<text class="day" x="{x}" y="{y}" text-anchor="middle">{d}</text>',
                    x=f"{cx:.1f}",
                    y=HEIGHT - 8,
                    d=date.fromisoformat(day).strftime("%m-%d"),
                )
            )
    parts.append(tag('<polyline class="cost" points="{p}"/>', p=" ".join(points)))
    total_runs, total_cost = sum(runs), sum(costs)
    legend = tag(
        '<p class="legend"><span class="key-runs">{runs_label}: {runs}</span> '
        '<span class="key-cost">{cost_label}: {cost}</span></p>',
        runs_label=t("chart_runs"),
        runs=total_runs,
        cost_label=t("chart_cost"),
        cost=_money(total_cost),
    )
    return tag(
        '<figure class="chart"><svg id="runs-chart" viewBox="0 0 {w} {h}" role="img" '
        'aria-label="{label}">{parts}</svg>'
        "<figcaption>{legend}</figcaption></figure>",
        w=WIDTH,
        h=HEIGHT,
        label=t("chart", days=counted(days, "day", t.locale)),
        parts=join(parts),
        legend=legend,
    )
