"""Two cards build at once, each in its own worktree, without touching each other or main.

Overlap is proven without sleeps: each fake builder announces its start in a file
(`touch_file`) and then waits for the other builder's file (`wait_for_file`)
before it answers. If the worker ran the builds one after the other, the first
would wait for a start that never comes and be killed by the lane's watchdog, and
the cards would fail.
"""

from __future__ import annotations

from pathlib import Path

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store import telemetry
from tests.pipeline.harness import builder_answer, git, operator_answer, review_answer, start
from tests.pipeline.support import OWNER, kill_strays, run_idle, tree_snapshot

# A lane of its own: concurrency 2, and a short watchdog so a missing overlap fails fast.
LANE = """
[lanes.pair]
runtime = "codex"
model = "gpt-5-codex-mini"
reasoning_effort = "medium"
iteration_limit = 5
concurrency = 2
timeout_s = 15
idle_timeout_s = 8
"""
CARDS = {
    "alpha": ("# Alpha\n\nALPHA-INTENT: add alpha.txt.\n", "alpha.txt"),
    "beta": ("# Beta\n\nBETA-INTENT: add beta.txt.\n", "beta.txt"),
}


def to_pair_lane() -> str:
    return operator_answer(
        {
            "decision": "direct_builder",
            "recommended_lane": "pair",
            "runtime": "codex",
            "model": "gpt-5-codex-mini",
            "reasoning_effort": "medium",
        }
    )


async def test_two_cards_build_at_once_in_separate_worktrees(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    marks = {slug: tmp_path / f"{slug}.started" for slug in CARDS}
    other = {"alpha": "beta", "beta": "alpha"}
    turns = [
        {"match": "OPERATOR-DECISION", "answer": to_pair_lane()},
        {"match": "OPERATOR-DECISION", "answer": to_pair_lane()},
    ]
    for slug, (_, filename) in CARDS.items():
        turns.append(
            {
                # Operator turns come first, so only a builder prompt reaches these.
                "match": f"{slug.upper()}-INTENT",
                "cli": "codex",
                "answer": builder_answer(f"Add {filename}"),
                "files": {filename: f"{slug}\n"},
                "touch_file": str(marks[slug]),
                "wait_for_file": str(marks[other[slug]]),
            }
        )
    turns += [{"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer()}] * 2
    intents = {slug: text for slug, (text, _) in CARDS.items()}
    h = await start(tmp_path, turns, intents, extra_config=LANE, monkeypatch=monkeypatch)
    harnesses.append(h)
    main_head = git(h.repo, "rev-parse", "main")
    before = tree_snapshot(h.repo)

    try:
        for slug in CARDS:
            await h.board.act(slug, Action.START, actor=OWNER)
        await run_idle(h, timeout=30)
    finally:
        kill_strays(h)

    for slug in CARDS:
        card = await h.board.card(slug)
        assert card.phase is Phase.READY_FOR_DEPLOYMENT, (slug, card.failure_detail)
        assert card.lane == "pair"

    # They overlapped: each builder saw the other's start (the barrier let them
    # finish), and the worker's own records show their runs intersecting in time.
    builders = {
        slug: next(c for c in h.calls() if f"{slug.upper()}-INTENT" in c["stdin"] and c["written"])
        for slug in CARDS
    }
    for slug, call in builders.items():
        assert marks[slug].read_text().split() == [str(call["pid"])]
    spans = []
    for slug in CARDS:
        card = await h.board.card(slug)
        [run] = [
            r for r in await telemetry.for_card(h.store.reader, card.id) if r.role == "builder"
        ]
        spans.append((run.created_at, run.created_at + run.duration_s))
    assert max(start for start, _ in spans) < min(end for _, end in spans), spans

    # Separate worktrees, each branch holding exactly its own change.
    workspaces = h.config.bot.workspaces.resolve()
    for slug, (_, filename) in CARDS.items():
        assert Path(builders[slug]["cwd"]).resolve() == workspaces / slug
        changed = git(h.repo, "diff", "--name-only", "main", f"card/{slug}").splitlines()
        assert changed == [filename], (slug, changed)
        theirs = CARDS[other[slug]][1]
        assert not (workspaces / slug / theirs).exists()
        assert git(h.repo, "show", f"card/{slug}:{filename}") == slug

    # The main checkout is untouched: same commit, no builder file; only the
    # wrapper's review reports have appeared next to it.
    assert git(h.repo, "rev-parse", "main") == main_head
    after = tree_snapshot(h.repo)
    assert {k: v for k, v in after.items() if not k.startswith("docs/review/")} == before
    assert sorted(set(after) - set(before)) == ["docs/review/alpha.md", "docs/review/beta.md"]
    assert git(h.repo, "status", "--porcelain", "--untracked-files=no") == ""

    # Deploying one card brings in its file, and only its file.
    await h.board.act("alpha", Action.DEPLOY, actor=OWNER)
    await run_idle(h)
    assert (await h.board.card("alpha")).phase is Phase.DEPLOYED
    assert (h.repo / "alpha.txt").read_text() == "alpha\n"
    assert not (h.repo / "beta.txt").exists()
    await h.board.act("beta", Action.DEPLOY, actor=OWNER)
    await run_idle(h)
    assert (await h.board.card("beta")).phase is Phase.DEPLOYED
    assert (h.repo / "beta.txt").read_text() == "beta\n"
    assert git(h.repo, "status", "--porcelain", "--untracked-files=no") == ""
