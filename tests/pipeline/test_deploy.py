"""Deploys: /deploy without a command, a merge conflict, and a retried failed deploy."""

from __future__ import annotations

from pathlib import Path

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from tests.pipeline.harness import builder_answer, direct, git, review_answer, start

OWNER = "owner@example.org"
APPROVE = {"match": "REVIEW-RESULT", "answer": review_answer("approve"), "repeat": True}
OPERATE = {"match": "OPERATOR-DECISION", "answer": direct("light"), "repeat": True}


def build(card: str, content: str) -> dict:
    # Both builders write the same file with different content: a real conflict.
    return {
        "match": f"docs/intent/{card}.md",
        "cli": "codex",
        "answer": builder_answer(f"Write shared.txt for {card}"),
        "files": {"shared.txt": content},
    }


async def test_without_a_command_an_approved_card_waits_for_deploy(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [OPERATE, build("alpha", "alpha\n"), APPROVE]
    h = await start(tmp_path, turns, {"alpha": "# Alpha\n"}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("alpha", Action.START, actor=OWNER)
    await h.run_until_idle()
    card = await h.board.card("alpha")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT and card.deployment_status == "pending"
    assert not (h.repo / "shared.txt").exists()  # nothing merged on its own

    await h.board.act("alpha", Action.DEPLOY, actor=OWNER)
    await h.run_until_idle()
    card = await h.board.card("alpha")
    assert (card.phase, card.deployment_status) == (Phase.DEPLOYED, "merged")
    assert (h.repo / "shared.txt").read_text() == "alpha\n"
    assert git(h.repo, "merge-base", "--is-ancestor", card.commit_hash, "main") == ""


async def test_a_merge_conflict_names_the_paths_changes_nothing_and_can_be_retried(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [OPERATE, build("alpha", "alpha\n"), build("beta", "beta\n"), APPROVE]
    h = await start(
        tmp_path, turns, {"alpha": "# Alpha\n", "beta": "# Beta\n"}, monkeypatch=monkeypatch
    )
    harnesses.append(h)
    for slug in ("alpha", "beta"):
        await h.board.act(slug, Action.START, actor=OWNER)
    await h.run_until_idle()
    await h.board.act("alpha", Action.DEPLOY, actor=OWNER)
    await h.run_until_idle()
    head = git(h.repo, "rev-parse", "main")

    await h.board.act("beta", Action.DEPLOY, actor=OWNER)
    await h.run_until_idle()
    beta = await h.board.card("beta")
    assert (beta.phase, beta.failure_stage) == (Phase.FAILED, "deploy")
    assert "merge conflict in shared.txt" in beta.failure_detail
    assert git(h.repo, "rev-parse", "main") == head  # nothing changed
    assert git(h.repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert (h.repo / "shared.txt").read_text() == "alpha\n"

    # The owner resolves it on main; a retry deploys the same commit again, once.
    (h.repo / "shared.txt").write_text("beta\n")
    git(h.repo, "commit", "-qam", "take beta's text")
    git(h.repo, "merge", "-q", "-s", "ours", "--no-edit", beta.commit_hash)
    await h.board.act("beta", Action.RETRY, actor=OWNER)
    await h.run_until_idle()
    beta = await h.board.card("beta")
    assert beta.phase is Phase.DEPLOYED, beta.failure_detail
    rows = await h.store.reader.fetchall(
        "SELECT state, idempotency_key FROM jobs WHERE kind = 'deploy' AND card_id = ? ORDER BY id",
        (beta.id,),
    )
    assert [r["state"] for r in rows] == ["failed", "done"]
    assert rows[1]["idempotency_key"] == f"beta:{beta.commit_hash}"
