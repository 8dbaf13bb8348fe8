"""`/runs <pipeline>` and `/budget` as chat answers (the shell shows the same text)."""

from __future__ import annotations

from chatbot.board import RunRecord, Spend, SpendReport
from chatbot.chat.render import run_fields
from chatbot.chat.texts import say
from chatbot.domain.counted import counted
from chatbot.notify.format import usd

__all__ = ["budget", "pipeline_runs", "usd"]


def pipeline_runs(pipeline: str, found: list[tuple[str, RunRecord]], locale: str) -> str:
    """Every run of one pipeline (a card and its children), oldest first, and the total."""
    if not found:
        return say(locale, "pipeline_none", id=pipeline)
    total = sum(run.cost_usd or 0.0 for _, run in found)
    lines = [say(locale, "pipeline_header", id=pipeline, count=len(found), cost=usd(total))]
    lines += [
        say(locale, "pipeline_run_line", slug=slug, **run_fields(run, locale))
        for slug, run in found
    ]
    return "\n".join(lines)


def _notes(spent: Spend, locale: str) -> str:
    notes = ""
    if spent.estimated:
        notes += say(locale, "budget_estimated", count=spent.estimated)
    if spent.unpriced:
        notes += say(locale, "budget_unpriced", count=spent.unpriced)
    return notes


def _line(spent: Spend, locale: str) -> str:
    runs = counted(spent.runs, "run", locale)
    notes = _notes(spent, locale)
    return say(locale, "budget_line", name=spent.name, usd=usd(spent.usd), runs=runs, notes=notes)


def budget(report: SpendReport, locale: str, days: int = 7) -> str:
    """Spend today (against the day's budget), per day, per lane, per role that runs in
    a lane of its own, and per card."""
    today = report.today
    day = report.day
    if day is not None:
        lines = [
            say(
                locale,
                "budget_today",
                spent=usd(day.spent),
                limit=usd(day.limit),
                setting=day.key,
                runs=counted(today.runs, "run", locale),
            )
        ]
        if day.reached:
            lines.append(say(locale, "budget_held_now"))
    else:
        runs = counted(today.runs, "run", locale)
        lines = [say(locale, "budget_today_free", spent=usd(today.usd), runs=runs)]
    if not report.days:
        lines.append(say(locale, "budget_none"))
        return "\n".join(lines)
    period = counted(days, "day", locale)
    lines.append(say(locale, "budget_days", days=period))
    lines += [_line(s, locale) for s in report.days]
    if report.lanes:
        lines.append(say(locale, "budget_lanes", days=period))
        lines += [_line(s, locale) for s in report.lanes]
    if report.roles:
        lines.append(say(locale, "budget_roles", days=period))
        lines += [_line(s, locale) for s in report.roles]
    lines.append(say(locale, "budget_cards"))
    for spent, state in report.cards:
        limit = say(locale, "budget_card_limit", limit=usd(state.limit)) if state else ""
        lines.append(
            say(
                locale,
                "budget_card_line",
                name=spent.name,
                usd=usd(spent.usd),
                limit=limit,
                runs=counted(spent.runs, "run", locale),
                notes=_notes(spent, locale),
            )
        )
    if report.per_card_usd:
        shown = ", ".join(f"{lane} {usd(v)}" for lane, v in sorted(report.per_card_usd.items()))
        lines.append(say(locale, "budget_per_card", lanes=shown))
    return "\n".join(lines)
