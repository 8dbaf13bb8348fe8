"""A repair held by the repository's checks (issue 37 point 2), through the real worker,
the scripted stand-ins and a chat room (the notifier and the chat on the board): a fixer
whose commits never pass fails the card with the same ways forward as a builder's
(/retry, /fix and /retry --skip-checks once, and /cancel as after any repair), its
notice names each, and each command it names works from there."""

from __future__ import annotations

import re

import pytest

from chatbot.chat.render import ways_forward as chat_ways
from chatbot.domain.phases import Phase
from tests.pipeline.harness import builder_answer, direct, review_answer, start
from tests.pipeline.room import open_room
from tests.pipeline.support import kill_strays, run_idle
from tests.pipeline.test_checks_gate import AGAIN, CHECKS, INTENT

FIRST = "FIXER-QUESTION"  # only a fixer session's first prompt has it


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    yield
    for h in list(harnesses):
        kill_strays(h)


def _fixer(subject: str, files: dict[str, str], match: str, **more: object) -> dict:
    answer = builder_answer(subject)
    return {"match": match, "cli": "codex", "answer": answer, "files": files} | more


async def _held(h, slug: str) -> None:
    card = await h.board.reads.card(slug)
    assert card.phase is Phase.FIXER_FAILED, (card.phase, card.failure_detail)
    assert card.failure_stage == "checks" and card.data.checks["verdict"] == "failed"


async def test_a_repair_that_never_passes_the_checks_names_each_way_and_each_works(
    tmp_path, monkeypatch, harnesses
) -> None:
    turns = [
        # Each further iteration writes the failed commit's hash, so it has a change.
        _fixer("Try again", {"greet.py": "# after {{sha}}\n"}, AGAIN, repeat=True)
        | {"capture": "at (?P<sha>[0-9a-f]{40})"},
        _fixer("Add greet()", {"greet.py": "x = 1\n"}, FIRST, repeat=True),
        {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer(), "repeat": True},
    ]
    h = await start(
        tmp_path,
        turns,
        {"greeting": INTENT},
        extra_config=CHECKS.format(tag="t5"),
        monkeypatch=monkeypatch,
    )
    harnesses.append(h)
    room = open_room(h)
    await room.say("/fix greeting")
    await run_idle(h)
    await _held(h, "greeting")
    assert len(h.prompts_of(FIRST)) == 1 and len(h.prompts_of(AGAIN)) == 4  # the limit, 5

    # The room is told, with the ways on; /status names the same.
    said = "\n".join(await room.new())
    assert "the repair's commits did not pass the checks" in said
    for way in ("/retry greeting repairs", "/retry greeting --skip-checks", "/fix greeting"):
        assert way in said, (way, said)
    assert "/cancel greeting returns the card to planned" in said
    # Each time the checks sent it back, the room heard it: iterations 2 to 5 of 5.
    for iteration in range(2, 6):
        assert f"back to the fixer for iteration {iteration} of 5." in said
    assert said.count("🔁 greeting: the checks of commit ") == 4
    card = await h.board.reads.card("greeting")
    named = [command for _, command, _ in chat_ways(card, "en")]
    assert named == ["/retry greeting [--skip-checks]", "/fix greeting", "/cancel greeting"]
    status = await room.say("/status greeting")
    assert "/fix greeting" in status and "/retry greeting [--skip-checks]" in status

    # Each of them works from there: /retry repairs again (a fresh session)...
    assert "fixer failed → fixer running" in await room.say("/retry greeting")
    await run_idle(h)
    await _held(h, "greeting")
    assert len(h.prompts_of(FIRST)) == 2
    # ...and so does /fix, counting another repair attempt...
    before = (await h.board.reads.card("greeting")).fixer_attempts
    assert "fixer failed → fixer running" in await room.say("/fix greeting")
    await run_idle(h)
    await _held(h, "greeting")
    assert len(h.prompts_of(FIRST)) == 3
    assert (await h.board.reads.card("greeting")).fixer_attempts == before + 1
    # ...the fresh session is told what still fails on the commit it starts from...
    assert "The repository's checks failed on the last commit" in h.prompts_of(FIRST)[-1]
    # .../cancel returns the card to where it was...
    await room.say("/cancel greeting")
    assert (await h.board.reads.card("greeting")).phase is Phase.PLANNED
    await room.say("/fix greeting")
    await run_idle(h)
    await _held(h, "greeting")
    # ...and /retry --skip-checks goes on to the review without them, once.
    assert "fixer failed → fixer running" in await room.say("/retry greeting --skip-checks")
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, (card.phase, card.failure_detail)
    assert card.data.checks["verdict"] == "skipped"
    assert "skipped" in h.prompts_of("REVIEW-RESULT")[-1]


async def test_the_room_hears_each_time_the_checks_send_the_agent_back(
    tmp_path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        # The second iteration (only the checks' failure prompt says AGAIN) passes.
        _fixer("Add ok.txt", {"ok.txt": "ok\n"}, AGAIN),
        _fixer("Add greet()", {"greet.py": "x = 1\n"}, "COMMIT-MESSAGE"),
        {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer(), "repeat": True},
    ]
    # The output's first line is the failure, and it tries to mention someone.
    checks = CHECKS.replace("echo checking; ", "").replace('"FAILED:', '"@room FAILED:')
    h = await start(
        tmp_path,
        turns,
        {"greeting": INTENT},
        extra_config=checks.format(tag="t6"),
        monkeypatch=monkeypatch,
    )
    harnesses.append(h)
    room = open_room(h)
    await room.say("/start greeting")
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    rows = [row for row in await room.rows() if row.purpose == "checks"]
    assert len(rows) == 1  # one failure, one notice; the passing commit says nothing here
    assert card.data.checks["verdict"] == "passed"
    text = rows[0].text
    head, _, shown = text.partition("\n")
    assert head.startswith("🔁 greeting: the checks of commit ") and head.endswith(
        ": failed; back to the builder for iteration 2 of 5."
    )
    commit = head.removeprefix("🔁 greeting: the checks of commit ")[:12]
    assert re.fullmatch("[0-9a-f]{12}", commit) and commit != card.commit_hash[:12]
    assert "@\u200broom FAILED: ok.txt is missing (t6)" in shown and shown.startswith("```")
    assert rows[0].mentions == ()
