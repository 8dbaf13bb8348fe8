"""A builder's job that ended closes its conversation (`Worker._talk_ends`): the steers
its agent never took are refused, and the room is told, its open approvals closed.

Once, the commit of the builder's result woke the worker, which found the job no longer
running, took it for one cancelled by /cancel and cancelled its task in the middle of
that last step: the job kept saying it talks, and what was still open stayed open. And a
steer that came after the agent's last run but before its job ended was refused with a
line in the log only, although the owner had been told it was sent.
"""

from __future__ import annotations

import logging
from pathlib import Path

from chatbot.board.run_events import RunEvent, RunFinished
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from tests.pipeline.harness import builder_answer, direct, review_answer, start
from tests.pipeline.room import open_room

OWNER = "xmpp:owner@example.org"
INTENT = "# Greeting\n\nSay hello.\n"
TURNS = [
    {"match": "OPERATOR-DECISION", "answer": direct()},
    {
        "match": "COMMIT-MESSAGE",
        "answer": builder_answer(),
        "files": {"greet.py": "def greet():\n    return 'hi'\n"},
    },
    {"match": "REVIEW-RESULT", "answer": review_answer()},
]


async def test_a_finished_builder_job_is_not_cancelled_and_closes_its_conversation(
    tmp_path: Path, monkeypatch, harnesses, caplog
) -> None:
    h = await start(tmp_path, TURNS, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    with caplog.at_level(logging.INFO, logger="chatbot.pipeline.worker"):
        await h.run_until_idle()

    assert (await h.board.reads.card("greeting")).phase is Phase.READY_FOR_DEPLOYMENT
    [builder] = await h.store.reader.fetchall(
        "SELECT state, talks FROM jobs WHERE kind = 'builder'"
    )
    assert (builder[0], builder[1]) == ("done", 0)
    assert not [r for r in caplog.records if "was cancelled" in r.getMessage()]


class LateSteer:
    """The owner steers just after the builder's last run ended, before its job did."""

    def __init__(self, board) -> None:
        self.board = board
        self.said = None

    async def hear(self, event: RunEvent) -> None:
        if isinstance(event, RunFinished) and event.record.role == "builder" and not self.said:
            self.said = await self.board.talk.steer(
                event.card.slug, "also greet in German", actor=OWNER
            )


async def test_a_steer_the_agent_never_took_is_refused_and_the_room_told(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    h = await start(tmp_path, TURNS, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    room = open_room(h)
    late = LateSteer(h.board)
    h.worker.observers.append(late)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await h.run_until_idle()

    assert late.said is not None
    row = await h.board.talk.approval(late.said.row.id)
    assert row is not None and (row.state, row.reason) == ("refused", "the run had ended")
    told = [text for text in await room.new() if "did not reach the agent" in text]
    assert told == [
        "↩️ greeting: your steer did not reach the agent: the run had ended. "
        "/status greeting shows where the card is."
    ]
