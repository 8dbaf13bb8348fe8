"""The worker's orchestration with the real CLIs: a codex builder reviewed by Claude Code
and deployed, the escalation ladder, a rejected review, deploys and merge conflicts,
two builds at once on each CLI, and a builder's turns bounded in total on each CLI that
bounds them. The model is a loopback provider; where runs overlap it answers by the role
and card in each prompt (a `responder`) instead of a fixed order.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store import cards as card_store
from runners.runtimes import RUNTIMES
from tests.pipeline.harness import builder_answer, git, operator_answer
from tests.pipeline.support import tree_snapshot
from tests.realcli.clis import CLIS
from tests.realcli.harness import (
    MODELS,
    OWNER,
    direct,
    judge_the_commit_in_the_prompt,
    review_of,
)
from tests.realcli.providers import Say, Seen, Shell, Steps, WriteFile

COMMIT_RE = re.compile(r"\b[0-9a-f]{40}\b")
CARD_RE = re.compile(r"intent card\s+`([a-z0-9-]+)`")


def card_of(seen: Seen) -> str:
    found = CARD_RE.search(seen.prompt)
    return found[1] if found else "unknown-card"


def team(cli: str, files: dict[str, tuple[str, str]], meet: bool = False):
    """A model that plays every role by the prompt: `files` maps a card to the file its
    builder writes. With `meet`, each builder waits until the other has started."""
    started = {slug: asyncio.Event() for slug in files}

    async def respond(seen: Seen) -> Steps:
        if "OPERATOR-DECISION" in seen.prompt:
            return Say(direct(cli))
        if "REVIEW-RESULT" in seen.prompt:
            return judge_the_commit_in_the_prompt(seen)
        slug = card_of(seen)
        name, content = files[slug]
        if seen.tool_results:
            return Say(builder_answer(f"Write {name} for {slug}"))
        if meet:
            started[slug].set()
            others = [event.wait() for other, event in started.items() if other != slug]
            try:
                await asyncio.wait_for(asyncio.gather(*others), 30)
            except TimeoutError:
                return Say(builder_answer("the other build never started"))
        return WriteFile(name, content)

    return respond


async def test_codex_builds_claude_reviews_and_the_deploy_runs_once(pipeline, tmp_path) -> None:
    deploy_log = tmp_path / "deploys.log"
    script = tmp_path / "deploy.sh"
    script.write_text(f'#!/bin/sh\necho "$1 $2" >> {deploy_log}\n')
    script.chmod(0o755)
    extra = f'\n[deploy]\ncommand = ["{script}", "{{commit}}", "{{slug}}"]\n'
    rh = await pipeline(
        "codex",
        {"greeting": "# Greeting module\n\nAdd `greet.py`.\n"},
        role_runtimes={"reviewer": "claude"},
        extra_config=extra,
    )
    codex, claude = rh.models["codex"], rh.models["claude"]
    codex.script(
        Say(direct("codex")),
        WriteFile("greet.py", "def greet():\n    return 'hi'\n"),
        Say(builder_answer("Add greet()")),
    )
    claude.script(judge_the_commit_in_the_prompt)
    await rh.h.board.act("greeting", Action.START, actor=OWNER)
    await rh.run_until_idle()

    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.DEPLOYED, (card.failure_stage, card.failure_detail)
    assert git(rh.h.repo, "rev-parse", "card/greeting") == card.commit_hash
    assert (rh.h.repo / "greet.py").read_text() == "def greet():\n    return 'hi'\n"
    assert git(rh.h.repo, "merge-base", "--is-ancestor", card.commit_hash, "main") == ""
    assert deploy_log.read_text().splitlines() == [f"{card.commit_hash} greeting"]
    assert not (rh.h.config.bot.workspaces / "greeting").exists()
    assert "Looks right." in (rh.h.repo / "docs/review/greeting.md").read_text()
    history = [e.to_phase for e in await card_store.events(rh.h.store.reader, card.id)]
    assert history == [
        Phase.PLANNED,
        Phase.OPERATOR_RUNNING,
        Phase.BUILDING,
        Phase.REVIEWING,
        Phase.READY_FOR_DEPLOYMENT,
        Phase.DEPLOYED,
    ]
    runs = {run.role: run for run in await rh.runs("greeting")}
    assert (runs["builder"].runtime, runs["reviewer"].runtime) == ("codex", "claude")
    assert runs["builder"].input_tokens == 200 and runs["builder"].cost_usd is None
    assert runs["reviewer"].cost_usd and runs["reviewer"].cost_usd > 0
    assert runs["builder"].prompt is None  # transcripts are off by default
    # codex says in its request which sandbox it runs in; claude offers no write tool.
    operator, builder, _ = codex.seen
    assert '"sandbox_mode":"read-only"' in operator.headers["x-codex-turn-metadata"]
    assert '"sandbox_mode":"workspace-write"' in builder.headers["x-codex-turn-metadata"]
    assert not {"Write", "Edit"} & claude.seen[0].tools

    # A second deploy request for the same commit never deploys twice.
    await rh.h.board.act("greeting", Action.ARCHIVE, actor=OWNER)
    async with rh.h.store.transaction() as db:
        job = await rh.h.board.queue_deploy(db, card)
    assert job.state.value == "done"
    assert len(deploy_log.read_text().splitlines()) == 1


async def test_limit_reached_twice_then_ladder_spent_then_split(pipeline) -> None:
    ladder = [
        {"model": "gpt-5.5", "reasoning_effort": "high", "iteration_limit": 5},
        {"model": "gpt-6-luna", "reasoning_effort": "", "iteration_limit": 6},
    ]
    rh = await pipeline("codex", {"report": "# Reporting\n\nBuild the report.\n"})
    model, effort = MODELS["codex"]
    decision = operator_answer(
        {
            "decision": "direct_builder",
            "recommended_lane": "light",
            "runtime": "codex",
            "model": model,
            "reasoning_effort": effort,
            "escalation": ladder,
        }
    )
    split = (
        "===SPLIT-REPORT===\n"
        "===CHILD===\nslug: report-data\n---\n# Report data\n\nCollect.\n===END-CHILD===\n"
        "===CHILD===\nslug: report-layout\n---\n# Report layout\n\nLay out.\n===END-CHILD===\n"
        "===END-SPLIT-REPORT==="
    )
    rh.model.script(Say(decision), *[Say("Still working on it.")] * 16)
    await rh.h.board.act("report", Action.START, actor=OWNER)
    await rh.run_until_idle()

    card = await rh.h.board.reads.card("report")
    assert card.phase is Phase.PLANNING_WITH_FEEDBACK, card.failure_detail
    assert card.data.limit_reached is True and card.escalation_step == 2
    worktree = str(rh.h.config.bot.workspaces / "report")
    builders = [s for s in rh.model.seen if s.cwd == worktree]
    # The real CLI sent each step's model; each step is one session, resumed within it.
    assert [s.model for s in builders] == ["gpt-5.5"] * 10 + ["gpt-6-luna"] * 6
    assert len({s.session for s in builders}) == 3
    actions = [e.action for e in await card_store.events(rh.h.store.reader, card.id)]
    assert actions.count("build_escalated") == 2 and actions[-1] == "build_limit_spent"

    rh.model.script(Say(split))
    await rh.h.board.act("report", Action.SPLIT, actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("report")
    assert card.phase is Phase.SPLIT
    kids = await card_store.children(rh.h.store.reader, card.id)
    assert sorted(k.slug for k in kids) == ["report-data", "report-layout"]
    assert "Still working on it." in rh.model.seen[-1].prompt  # the planner saw the report


async def test_a_claude_build_rejected_by_the_codex_review_keeps_the_report(pipeline) -> None:
    rh = await pipeline("codex", {"report": "# Report\n"})
    codex, claude = rh.models["codex"], rh.models["claude"]
    heavy_model, _ = MODELS["claude"]
    codex.script(
        Say(
            operator_answer(
                {
                    "decision": "direct_builder",
                    "recommended_lane": "heavy",
                    "runtime": "claude",
                    "model": heavy_model,
                }
            )
        ),
        lambda seen: Say(review_of(COMMIT_RE.search(seen.prompt)[0], "reject", "Missing tests.")),
    )
    claude.script(WriteFile("report.py", "x = 1\n"), Say(builder_answer("Add report")))
    await rh.h.board.act("report", Action.START, actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("report")
    assert card.phase is Phase.PLANNING_WITH_FEEDBACK, card.failure_detail
    assert card.review_decision == "reject" and card.lane == "heavy"
    assert card.data.reviews[-1]["report"].endswith("Missing tests.")
    assert card.data.reviews[-1]["commit"] == card.commit_hash
    assert "Missing tests." in (rh.h.repo / "docs/review/report.md").read_text()
    runs = {run.role: run for run in await rh.runs("report")}
    assert runs["builder"].runtime == "claude" and runs["builder"].cost_usd > 0


async def test_an_approved_card_waits_for_deploy_without_a_command(pipeline) -> None:
    rh = await pipeline("codex", {"alpha": "# Alpha\n"})
    rh.model.responder = team("codex", {"alpha": ("shared.txt", "alpha\n")})
    await rh.h.board.act("alpha", Action.START, actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("alpha")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT and card.deployment_status == "pending"
    assert not (rh.h.repo / "shared.txt").exists()

    await rh.h.board.act("alpha", Action.DEPLOY, actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("alpha")
    assert (card.phase, card.deployment_status) == (Phase.DEPLOYED, "merged")
    assert (rh.h.repo / "shared.txt").read_text() == "alpha\n"


async def test_a_merge_conflict_names_the_paths_changes_nothing_and_can_be_retried(
    pipeline,
) -> None:
    rh = await pipeline("codex", {"alpha": "# Alpha\n", "beta": "# Beta\n"})
    # Both builders write the same file with different content: a real conflict.
    rh.model.responder = team(
        "codex", {"alpha": ("shared.txt", "alpha\n"), "beta": ("shared.txt", "beta\n")}
    )
    for slug in ("alpha", "beta"):
        await rh.h.board.act(slug, Action.START, actor=OWNER)
    await rh.run_until_idle()
    await rh.h.board.act("alpha", Action.DEPLOY, actor=OWNER)
    await rh.run_until_idle()
    head = git(rh.h.repo, "rev-parse", "main")

    await rh.h.board.act("beta", Action.DEPLOY, actor=OWNER)
    await rh.run_until_idle()
    beta = await rh.h.board.reads.card("beta")
    assert (beta.phase, beta.failure_stage) == (Phase.FAILED, "deploy")
    assert "merge conflict in shared.txt" in beta.failure_detail
    assert git(rh.h.repo, "rev-parse", "main") == head
    assert git(rh.h.repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert (rh.h.repo / "shared.txt").read_text() == "alpha\n"

    (rh.h.repo / "shared.txt").write_text("beta\n")
    git(rh.h.repo, "commit", "-qam", "take beta's text")
    git(rh.h.repo, "merge", "-q", "-s", "ours", "--no-edit", beta.commit_hash)
    await rh.h.board.act("beta", Action.RETRY, actor=OWNER)
    await rh.run_until_idle()
    beta = await rh.h.board.reads.card("beta")
    assert beta.phase is Phase.DEPLOYED, beta.failure_detail
    rows = await rh.h.store.reader.fetchall(
        "SELECT state, idempotency_key FROM jobs WHERE kind = 'deploy' AND card_id = ? ORDER BY id",
        (beta.id,),
    )
    assert [r["state"] for r in rows] == ["failed", "done"]
    assert rows[1]["idempotency_key"] == f"beta:{beta.commit_hash}"


PAIR_LANE = '\n[lanes.pair]\nruntime = "{cli}"\nmodel = "{model}"\niteration_limit = 5\n'
PAIR_LANE += "concurrency = 2\ntimeout_s = 60\nidle_timeout_s = 60\n"


async def test_two_cards_build_at_once_in_separate_worktrees(pipeline, cli: str) -> None:
    model, _ = MODELS[cli]
    files = {"alpha": ("alpha.txt", "alpha\n"), "beta": ("beta.txt", "beta\n")}
    rh = await pipeline(
        cli,
        {"alpha": "# Alpha\n", "beta": "# Beta\n"},
        extra_config=PAIR_LANE.format(cli=cli, model=model),
    )
    respond = team(cli, files, meet=True)
    pair = operator_answer(
        {"decision": "direct_builder", "recommended_lane": "pair", "runtime": cli, "model": model}
    )

    async def to_pair_lane(seen: Seen) -> Steps:
        return Say(pair) if "OPERATOR-DECISION" in seen.prompt else await respond(seen)

    rh.model.responder = to_pair_lane
    main_head = git(rh.h.repo, "rev-parse", "main")
    before = tree_snapshot(rh.h.repo)
    for slug in files:
        await rh.h.board.act(slug, Action.START, actor=OWNER)
    await rh.run_until_idle()

    for slug, (name, content) in files.items():
        card = await rh.h.board.reads.card(slug)
        assert card.phase is Phase.READY_FOR_DEPLOYMENT, (slug, card.failure_detail)
        assert card.lane == "pair"
        # Each builder waited for the other to start: they ran at the same time.
        changed = git(rh.h.repo, "diff", "--name-only", "main", f"card/{slug}").splitlines()
        assert changed == [name]
        assert git(rh.h.repo, "show", f"card/{slug}:{name}") == content.strip()
    builder_dirs = {Path(s.cwd).name for s in rh.model.seen if "COMMIT-MESSAGE" in s.prompt}
    assert builder_dirs == {"alpha", "beta"}
    assert git(rh.h.repo, "rev-parse", "main") == main_head
    after = tree_snapshot(rh.h.repo)
    assert {k: v for k, v in after.items() if not k.startswith("docs/review/")} == before


@pytest.mark.parametrize("cli", [name for name in CLIS if RUNTIMES[name].bounds_turns])
async def test_a_builder_gets_the_iteration_limit_in_total(pipeline, cli: str) -> None:
    """The light lane's limit is 5: a first run that talks for three turns leaves the
    resumed run two (claude's `--max-turns 2`, gemini's GEMINI_MAX_TURNS), not five more."""
    rh = await pipeline(cli, {"greeting": "# Greeting\n\nAdd greet.py.\n"})
    rh.model.script(
        Say(direct(cli)),
        Shell("ls"),
        Shell("ls"),
        Say("Not finished yet."),
        Shell("ls"),
        Shell("ls"),
        Shell("ls"),  # a sixth turn: the real CLI never asks for it
    )
    await rh.h.board.act("greeting", Action.START, actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.PLANNING_WITH_FEEDBACK, (card.failure_stage, card.failure_detail)
    builds = [run for run in await rh.runs("greeting") if run.role == "builder"]
    assert builds[0].turns == 3 and builds[0].outcome == "ok"
    assert CLIS[cli].turn_limit in builds[1].outcome
    # Five model requests of the builder in all; the sixth turn was never requested.
    assert len(rh.model.seen) == 1 + 5 and rh.model.pending == 1
    assert builds[1].session_id == builds[0].session_id
