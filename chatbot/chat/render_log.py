"""`/log <slug> --file`: a card's whole history and its runs as one text file.

The chat's /log answer is cut to a message's size; the file is not (a card with a
long life has hundreds of events), and it adds each run's figures: what ran, on what,
how it ended, what it cost.
"""

from __future__ import annotations

from chatbot.board import CardView, RunRecord
from chatbot.chat import render
from chatbot.notify.format import one_line

# The file is not cut to a message's size, but one line stays one line of reasonable
# length: a card's title, a run's rejection (an agent's words, of any length).
TITLE_CHARS = 300
REJECTION_CHARS = 1_000


def _run_line(run: RunRecord) -> str:
    model = run.actual_model or run.configured_model or "default model"
    tokens = "-"
    if run.input_tokens is not None or run.output_tokens is not None:
        tokens = f"{run.input_tokens or 0} in / {run.output_tokens or 0} out"
    cost = "-" if run.cost_usd is None else f"${run.cost_usd:.4f}"
    parts = [
        render.when(run.created_at, seconds=True),
        run.role,
        f"{run.runtime} {model}",
        run.outcome,
        f"{run.duration_s:.1f} s",
        f"tokens {tokens}",
        f"cost {cost}",
    ]
    if run.steers:
        parts.append(f"{run.steers} steers")
    if run.rejection:
        parts.append(f"rejected: {one_line(run.rejection, REJECTION_CHARS)}")
    return " | ".join(parts)


def log_file(view: CardView, runs: list[RunRecord], locale: str) -> str:
    card = view.card
    lines = [
        f"# {card.slug}: {one_line(card.title, TITLE_CHARS)}",
        f"phase: {card.phase.label(locale)}",
        f"commit: {card.commit_hash or '-'}",
        "",
        render.history(view, locale),
        "",
        f"## Runs ({len(runs)}, newest first)",
    ]
    lines += [_run_line(run) for run in runs] or ["(none)"]
    return "\n".join(lines) + "\n"
