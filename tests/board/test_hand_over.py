"""The hand-over line `/status <slug>` and the card page print (issue 25): the session goes
on in a terminal with the model and effort the bot's run used, not the CLI's default (on
another model codex first compacts the session's history into a summary; the end-to-end
proof is tests/integration/test_talk_real.py's hand-over test)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from chatbot.board.hand_over import hand_over
from chatbot.domain.phases import Phase
from chatbot.store.cards import Card, Kind
from chatbot.store.telemetry import RunRecord
from tests.records import run_record

SESSION = "01a232e3-15af-7c33-aae9-97144a6a602d"


@dataclass(frozen=True)
class Section:
    binary: str
    base_url: str | None = "http://127.0.0.1:9/v1"
    api_key_file: Path | None = Path("/etc/bot/key")


def builder_run(runtime: str, model: str, effort: str | None) -> RunRecord:
    return run_record(
        runtime=runtime,
        configured_model=model,
        session_id=SESSION,
        actual_reasoning_effort=effort,
    )


@pytest.mark.parametrize(
    ("runtime", "model", "effort", "expected"),
    [
        (
            "codex",
            "gpt-5.5",
            "high",
            ["-c", 'model="gpt-5.5"', "-c", 'model_reasoning_effort="high"'],
        ),
        ("claude", "claude-sonnet-4-5", None, ["--model", "claude-sonnet-4-5"]),
    ],
)
def test_the_hand_over_line_keeps_the_runs_model_and_effort(
    tmp_path: Path, runtime: str, model: str, effort: str | None, expected: list[str]
) -> None:
    card = Card(1, "indent", Kind.INTENT, "Indent", Phase.READY_FOR_DEPLOYMENT, None, 1)
    given = hand_over(
        card,
        [builder_run(runtime, model, effort)],
        tmp_path / "ws",
        {runtime: Section(binary=runtime)},
    )
    assert given is not None and given.command is not None
    words = shlex.split(given.command.split("&&")[-1])
    found = [words[i : i + len(expected)] for i in range(len(words))]
    assert expected in found, given.command
    assert given.session == SESSION


@pytest.mark.parametrize("phase", [Phase.DEPLOYED, Phase.ARCHIVED, Phase.DONE])
def test_a_finished_card_offers_no_session_to_continue(tmp_path: Path, phase: Phase) -> None:
    # Issue 34: a deployed card's /status named its session and how to go on with it in
    # a terminal, though its work is over and its worktree removed.
    card = Card(1, "indent", Kind.INTENT, "Indent", phase, None, 1)
    runs = [builder_run("codex", "gpt-5.5", "high")]
    assert hand_over(card, runs, tmp_path / "ws", {"codex": Section(binary="codex")}) is None
