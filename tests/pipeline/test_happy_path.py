"""start -> operator direct_builder -> builder commits in its worktree -> review approves
-> merged and the deploy command run once."""

from __future__ import annotations

from pathlib import Path

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store import cards as card_store
from chatbot.store import telemetry
from tests.pipeline.harness import builder_answer, direct, git, review_answer, start

INTENT = "# Greeting module\n\nAdd `greet.py` with a `greet()` function.\n"


async def test_happy_path_to_deployed(tmp_path: Path, monkeypatch, harnesses) -> None:
    deploy_log = tmp_path / "deploys.log"
    script = tmp_path / "deploy.sh"
    script.write_text(f'#!/bin/sh\necho "$1 $2" >> {deploy_log}\n')
    script.chmod(0o755)
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": builder_answer("Add greet()"),
            "files": {"greet.py": "def greet():\n    return 'hi'\n"},
            "usage": {"input_tokens": 1200, "cached_input_tokens": 200, "output_tokens": 300},
        },
        {
            "match": "REVIEW-RESULT",
            "cli": "claude",
            "answer": review_answer("approve"),
            "cost_usd": 0.0123,
        },
    ]
    extra = f'\n[deploy]\ncommand = ["{script}", "{{commit}}", "{{slug}}"]\n'
    h = await start(
        tmp_path, turns, {"greeting": INTENT}, extra_config=extra, monkeypatch=monkeypatch
    )
    harnesses.append(h)

    await h.board.act("greeting", Action.START, actor="owner@example.org")
    await h.run_until_idle()

    card = await h.board.card("greeting")
    assert card.phase is Phase.DEPLOYED, (card.failure_stage, card.failure_detail)
    assert card.deployment_status == "deployed"
    # The builder's change is a real commit on the card's branch, made by the wrapper.
    assert git(h.repo, "rev-parse", "card/greeting") == card.commit_hash
    assert git(h.repo, "log", "-1", "--format=%s", card.commit_hash) == "Add greet()"
    # Merged into main, and the main checkout has the file.
    assert (h.repo / "greet.py").read_text() == "def greet():\n    return 'hi'\n"
    assert git(h.repo, "merge-base", "--is-ancestor", card.commit_hash, "main") == ""
    # The deploy command ran exactly once with the commit and slug filled in.
    assert deploy_log.read_text().splitlines() == [f"{card.commit_hash} greeting"]
    # Deployed: its worktree is gone, its branch stays for the record.
    assert not (h.config.bot.workspaces / "greeting").exists()
    assert "card/greeting" in git(h.repo, "branch", "--list", "card/greeting")
    # The review report is in the repository, written by the wrapper.
    assert "Looks right." in (h.repo / "docs" / "review" / "greeting.md").read_text()
    history = [e.to_phase for e in await card_store.events(h.store.reader, card.id)]
    assert history == [
        Phase.PLANNED,
        Phase.OPERATOR_RUNNING,
        Phase.BUILDING,
        Phase.REVIEWING,
        Phase.READY_FOR_DEPLOYMENT,
        Phase.DEPLOYED,
    ]
    runs = await telemetry.for_card(h.store.reader, card.id)
    by_role = {r.role: r for r in runs}
    assert set(by_role) == {"operator", "builder", "reviewer"}
    assert by_role["builder"].input_tokens == 1200 and by_role["builder"].output_tokens == 300
    assert by_role["reviewer"].cost_usd == 0.0123
    assert by_role["builder"].prompt is None  # transcripts are off by default
    # The builder ran writable in its own worktree, the others read-only.
    calls = h.calls()
    builder_call = next(
        c
        for c in calls
        if "COMMIT-MESSAGE" in c["stdin"] and c["cli"] == "codex" and "workspace-write" in c["argv"]
    )
    assert Path(builder_call["cwd"]).resolve() == (h.config.bot.workspaces / "greeting").resolve()
    operator_call = next(c for c in calls if "OPERATOR-DECISION" in c["stdin"])
    assert "read-only" in operator_call["argv"]

    # A second deploy request for the same commit never deploys twice.
    await h.board.act("greeting", Action.ARCHIVE, actor="owner@example.org")
    async with h.store.transaction() as db:
        job = await h.board.queue_deploy(db, card)
    assert job.state.value == "done"
    assert len(deploy_log.read_text().splitlines()) == 1
