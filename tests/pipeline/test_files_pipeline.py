"""A card's files through the real worker and the scripted stand-ins (issue 36): the
builder's prompt names the card's files and finds them in its worktree, its commit
does not take them; files its report offers come back to the room as files."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.board import AttachPurpose
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from tests.pipeline.harness import builder_answer, direct, git, review_answer, start
from tests.pipeline.room import open_room
from tests.pipeline.support import OWNER, kill_strays, run_idle

INTENT = "# Greeting module\n\nAdd `greet.py` with a `greet()` function.\n"
NOTES = "The greeting must say hello.\n"


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    yield
    for h in list(harnesses):
        kill_strays(h)


async def test_the_cards_files_are_in_the_worktree_and_named_in_the_prompt(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    report = "Done; tests pass.\nArtifacts: report.txt, missing.png"
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": builder_answer("Add greet()", report=report),
            "files": {"greet.py": "def greet():\n    return 'hello'\n", "report.txt": "42\n"},
        },
        {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer(), "repeat": True},
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    room = open_room(h)
    kept = await h.board.files.keep(
        NOTES.encode(),
        name="notes.txt",
        declared_type="text/plain",
        actor=str(OWNER),
        origin={"transport": "xmpp", "chat": "room", "message_id": "m1"},
        encrypted=False,
    )
    await h.board.files.attach([kept.id], "greeting", purpose=AttachPurpose.CARD, actor=str(OWNER))
    await h.board.act("greeting", Action.START, actor=str(OWNER))
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail

    [builder] = h.prompts_of("COMMIT-MESSAGE")
    worktree = h.config.bot.workspaces.absolute() / "greeting"
    placed = next(worktree.rglob("notes.txt"))
    assert placed.read_text() == NOTES and placed.parent.name == ".chatbot-files"
    assert f"- {placed}: text, {len(NOTES)} bytes, from {OWNER}" in builder
    # The commit holds the change, not the owner's file.
    files = git(h.repo, "show", "--name-only", "--format=", card.commit_hash or "").split()
    assert "greet.py" in files and not any(".chatbot-files" in f for f in files)

    # The report's artifact comes back as a file; the missing one is named.
    rows = await room.rows()
    offered = [r for r in rows if r.attachment_id is not None]
    assert [r.text for r in offered] == ["📎 greeting: report.txt, from the run's report"]
    assert await h.board.files.data(offered[0].attachment_id) == b"42\n"
    notice = next(r.text for r in rows if "builder committed" in r.text)
    assert "📎 not sent: missing.png: not in the worktree" in notice
