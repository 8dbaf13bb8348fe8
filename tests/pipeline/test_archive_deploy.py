"""An archived card is never deployed: a deployment still queued for it is dropped, and
one already running refuses the archive (found by the stateful test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store import jobs as job_store
from chatbot.store.jobs import ActiveJobExists
from tests.pipeline.harness import builder_answer, direct, git, review_answer, start

OWNER = "owner@example.org"
APPROVE = {"match": "REVIEW-RESULT", "answer": review_answer("approve"), "repeat": True}
OPERATE = {"match": "OPERATOR-DECISION", "answer": direct("light"), "repeat": True}


def build(card: str, content: str) -> dict:
    return {
        "match": f"docs/intent/{card}.md",
        "cli": "codex",
        "answer": builder_answer(f"Write shared.txt for {card}"),
        "files": {"shared.txt": content},
    }


async def approved_with_deploy_queued(tmp_path: Path, monkeypatch, harnesses):
    """A card whose review approved it, with its deployment queued but not yet run."""
    marker = tmp_path / "deployed"
    extra = f'\n[deploy]\ncommand = ["/bin/sh", "-c", "echo {{slug}} >> {marker}"]\n'
    turns = [OPERATE, build("alpha", "alpha\n"), APPROVE]
    h = await start(
        tmp_path, turns, {"alpha": "# Alpha\n"}, extra_config=extra, monkeypatch=monkeypatch
    )
    harnesses.append(h)
    await h.board.act("alpha", Action.START, actor=OWNER)
    del h.worker.lanes["deploy"]  # the deployment waits in the queue
    await h.run_until_idle()
    h.worker.lanes["deploy"] = 1
    card = await h.board.reads.card("alpha")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT
    deploy = await job_store.active_for_card(h.store.reader, card.id)
    assert deploy is not None and deploy.kind == "deploy"
    return h, marker, deploy


async def test_archiving_a_card_drops_its_queued_deployment(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    h, marker, deploy = await approved_with_deploy_queued(tmp_path, monkeypatch, harnesses)
    head = git(h.repo, "rev-parse", "main")

    await h.board.act("alpha", Action.ARCHIVE, actor=OWNER)
    await h.run_until_idle()

    assert (await h.board.reads.card("alpha")).phase is Phase.ARCHIVED
    job = await job_store.get(h.store.reader, deploy.id)
    assert job is not None and job.state == "cancelled"
    # Nothing of the archived card reached main, and the deploy command never ran.
    assert git(h.repo, "rev-parse", "main") == head
    assert not marker.exists()


async def test_a_card_being_deployed_cannot_be_archived(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    h, _marker, deploy = await approved_with_deploy_queued(tmp_path, monkeypatch, harnesses)
    async with h.store.transaction() as db:
        running = await job_store.claim(db, "deploy", h.worker.instance_id, 60)
    assert running is not None and running.id == deploy.id

    with pytest.raises(ActiveJobExists):
        await h.board.act("alpha", Action.ARCHIVE, actor=OWNER)

    assert (await h.board.reads.card("alpha")).phase is Phase.READY_FOR_DEPLOYMENT
    job = await job_store.get(h.store.reader, deploy.id)
    assert job is not None and job.state == "running"
