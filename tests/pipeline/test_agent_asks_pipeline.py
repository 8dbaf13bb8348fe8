"""A builder asks the owner through the run's tools, in the real worker with the scripted
stand-ins (runners/scripted/mcp_calls.py speaks MCP to the run's server through the same
pump a real CLI starts): codex (app-server) on the light lane and Claude Code on the
heavy one call `ask_owner` with three options, the owner answers on the board while the
run waits, the answer is the tool's result in the builder's answer, and the card is
committed and reviewed; unanswered, the run decides itself; a reading role only reads."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.pipeline.run_tools import NO_ANSWER
from tests.pipeline.harness import Harness, builder_answer, direct, review_answer, start
from tests.pipeline.support import OWNER, kill_strays

INTENT = "# Port\n\nListen on a port the owner picks.\n"
ASK = {
    "tool": "ask_owner",
    "arguments": {"question": "Which port?", "options": ["80", "8080", "9090"]},
}
REVIEW = {"match": "REVIEW-RESULT", "answer": review_answer(), "repeat": True}


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    yield
    for h in list(harnesses):
        kill_strays(h)


def turns(lane: str, cli: str) -> list[dict]:
    return [
        {"match": "OPERATOR-DECISION", "answer": direct(lane)},
        {
            "match": "COMMIT-MESSAGE",
            "cli": cli,
            "tool_calls": [ASK],
            "files": {"port.txt": "chosen\n"},
            "answer": builder_answer("Listen on the chosen port", "Asked: {{TOOL_RESULT}}"),
        },
        REVIEW,
    ]


async def answer_when_asked(h: Harness, text: str) -> None:
    card = await h.board.reads.card("port")
    async with asyncio.timeout(30):
        while not (asked := await h.board.asks.open_for_card(card)):
            await asyncio.sleep(0.05)
    [question] = asked
    assert (question.text, question.options) == ("Which port?", ["80", "8080", "9090"])
    await h.board.asks.answer(question.id, text, actor=OWNER, via="command")
    h.worker.wake()


@pytest.mark.parametrize(("lane", "cli"), [("light", "codex"), ("heavy", "claude")])
async def test_the_builder_waits_for_the_owners_answer_and_builds(
    lane: str, cli: str, tmp_path: Path, monkeypatch, harnesses
) -> None:
    h = await start(tmp_path, turns(lane, cli), {"port": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("port", Action.START, actor=OWNER)
    owner = asyncio.create_task(answer_when_asked(h, "9090"))
    await asyncio.wait_for(h.run_until_idle(), 90)
    await owner
    card = await h.board.reads.card("port")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    [built] = [c for c in h.calls() if c.get("tool_results")]
    assert built["cli"] == cli and built["tool_results"] == ["The owner answered: 9090"]
    report = (h.repo / "docs" / "review" / "port.md").read_text()
    assert report  # reviewed; the builder's report went with the commit
    # The builder's argv named the server; the reviewer's only the reading tool.
    assert any("mcp" in word for word in built["argv"])


async def test_nobody_answers_and_the_builder_decides_itself(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    h = await start(
        tmp_path,
        turns("light", "codex"),
        {"port": INTENT},
        monkeypatch=monkeypatch,
        edit=lambda text: text.replace('sandbox = "off"\n', 'sandbox = "off"\nask_timeout_s = 5\n'),
    )
    harnesses.append(h)
    await h.board.act("port", Action.START, actor=OWNER)
    await asyncio.wait_for(h.run_until_idle(), 90)
    card = await h.board.reads.card("port")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    [built] = [c for c in h.calls() if c.get("tool_results")]
    assert built["tool_results"] == [NO_ANSWER]
    assert await h.board.asks.open_for_card(card) == []
