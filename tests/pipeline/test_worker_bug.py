"""A bug in one job's coroutine fails that job, with the error named, and nothing else.

The worker's catch-all for a job (`Worker._handle`) once went missing in an edit
and no test noticed: an exception there then escaped the job's task, the job stayed
"running" and its card waited for ever. Here the operator's coroutine is replaced by
one that raises, as a bug would; the card still gets a way forward, the worker goes
on with the next card, and the job is not failed twice.
"""

from __future__ import annotations

from pathlib import Path

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.pipeline import worker as worker_module
from chatbot.pipeline.jobs import handler_of
from tests.pipeline.harness import builder_answer, direct, review_answer, start

OWNER = "xmpp:owner@example.org"
INTENT = "# Greeting\n\nSay hello.\n"


async def test_a_bug_in_a_job_fails_that_job_and_the_worker_goes_on(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct()},
        {
            "match": "COMMIT-MESSAGE",
            "answer": builder_answer(),
            "files": {"greet.py": "def greet():\n    return 'hi'\n"},
        },
        {"match": "REVIEW-RESULT", "answer": review_answer()},
    ]
    h = await start(tmp_path, turns, {"buggy": INTENT, "fine": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    calls = []

    async def broken(ctx) -> None:
        calls.append(ctx.card.slug)
        if ctx.card.slug == "buggy":
            raise RuntimeError("a bug in the operator's coroutine")
        await handler_of("operator")(ctx)

    monkeypatch.setattr(
        worker_module, "handler_of", lambda kind: broken if kind == "operator" else handler_of(kind)
    )
    await h.board.act("buggy", Action.START, actor=OWNER)
    await h.board.act("fine", Action.START, actor=OWNER)
    await h.run_until_idle()

    buggy = await h.board.reads.card("buggy")
    assert buggy.phase is Phase.NEEDS_HUMAN
    assert "internal error: RuntimeError: a bug in the operator's coroutine" in (
        buggy.failure_detail or ""
    )
    assert (await h.board.reads.card("fine")).phase is Phase.READY_FOR_DEPLOYMENT
    assert sorted(calls) == ["buggy", "fine"]
    assert h.worker.failed_jobs == 1
    jobs = await h.store.reader.fetchall("SELECT state FROM jobs WHERE card_id = ?", (buggy.id,))
    assert [row[0] for row in jobs] == ["failed"]
