"""A line comment through the real worker and the scripted stand-ins (issue 35 point
2): on an approved card it starts the fixer, whose prompt holds the file, the lines,
the quoted code and the words; the fixer's commit answers it, and the reviewer of that
commit is shown which comment it answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.board.comments import NewComment
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from tests.pipeline.harness import builder_answer, direct, review_answer, start
from tests.pipeline.support import OWNER, kill_strays, run_idle

INTENT = "# Greeting module\n\nAdd `greet.py` with a `greet()` function.\n"
GREET = "def greet():\n    return 'hi'\n"
FIXED = "def greet():\n    return 'hello'\n"


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    yield
    for h in list(harnesses):
        kill_strays(h)


async def test_a_comment_reaches_the_fixer_and_the_next_review_lists_it_answered(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        # The fixer's prompt: its own section of comments (the reviewer's is another).
        {
            "match": "line comments to address",
            "cli": "codex",
            "answer": builder_answer("Say hello"),
            "files": {"greet.py": FIXED},
        },
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": builder_answer("Add greet()"),
            "files": {"greet.py": GREET},
        },
        {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer(), "repeat": True},
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    first = card.commit_hash

    done = await h.board.comments.add(
        "greeting", NewComment("greet.py", (2, 2), "say hello, not hi"), actor=OWNER
    )
    assert done.went == "fixer" and done.comment.quote == "    return 'hi'"
    await run_idle(h)

    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    assert card.commit_hash != first
    [fixer] = h.prompts_of("line comments to address")
    given = json.loads(
        fixer.split("line comments to address", 1)[1].split("```")[1].split("\n", 1)[1]
    )
    assert given == [
        {
            "comment": done.comment.id,
            "file": "greet.py",
            "lines": [2, 2],
            "code": "    return 'hi'",
            "text": "say hello, not hi",
            "by": OWNER,
        }
    ]
    [comment] = await h.board.comments.of_card(card)
    assert (comment.state, comment.answered_commit) == ("answered", card.commit_hash)
    reviews = h.prompts_of("REVIEW-RESULT")
    assert len(reviews) == 2
    assert "say hello, not hi" not in reviews[0]
    assert "say hello, not hi" in reviews[1] and "this commit answers" in reviews[1]
