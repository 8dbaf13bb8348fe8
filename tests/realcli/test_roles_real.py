"""Every role through each real agent CLI (tests/realcli/clis/), through the bot's own
pipeline (store, worker, git worktrees, contracts), with only the model scripted.

Each test runs once per CLI. The scripted model uses the CLI's real tools: a shell
command or a file write in the builder's worktree, `git show` for the reviewer. What
differs between CLIs comes from the runtime's record (cost, effort) or the CLI's test
module (what it says when it refuses), never from its name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.store import cards as card_store
from chatbot.store import questions as question_store
from runners.runtimes import RUNTIMES
from tests.pipeline.harness import builder_answer, git, operator_answer, synthesis_answer
from tests.pipeline.support import tree_snapshot
from tests.realcli.clis import CLIS
from tests.realcli.harness import (
    OWNER,
    RealHarness,
    direct,
    judge_the_commit_in_the_prompt,
    review_of,
    split_child,
)
from tests.realcli.providers import Look, Say, Seen, Shell, WriteFile

INTENT = "# Greeting\n\nAdd `greet.py` with a `greet()` function.\n"
GREET = "def greet():\n    return 'hi'\n"


@pytest.fixture
def real(cli, pipeline) -> Callable[[dict[str, str]], Awaitable[RealHarness]]:
    """Start the pipeline harness on the CLI under test."""
    return lambda intents: pipeline(cli, intents)


def judge_what_git_show_showed(seen: Seen) -> Say:
    """The reviewer quotes the commit it saw in its own `git show` output (which a CLI
    may hand the model inside a frame of its own, so not at a line's start)."""
    shown = "\n".join(seen.tool_results)
    found = re.search(r"\bcommit ([0-9a-f]{40})\b", shown)
    return Say(review_of(found[1] if found else "no-commit-in-git-show-output"))


def build(path: str, content: str, subject: str) -> list:
    """A builder's two model turns: write the file with a tool, then the final answer."""
    return [WriteFile(path, content), Say(builder_answer(subject))]


async def assert_runs_recorded(rh: RealHarness, slug: str, roles: list[str]) -> None:
    """One telemetry row per run, with the session the CLI used, the usage from the CLI's
    own output, and its cost where the CLI reports one (no prices are configured here)."""
    runs = await rh.runs(slug)
    assert [run.role for run in runs] == roles
    sessions = rh.sessions()
    record = RUNTIMES[rh.cli]
    for run in runs:
        assert run.outcome == "ok", run.outcome
        assert run.session_id and run.session_id in sessions, (run.session_id, sessions)
        assert run.input_tokens and run.input_tokens % 100 == 0
        assert run.output_tokens == run.input_tokens // 10
        if record.reports_cost:
            assert run.cost_usd is not None and run.cost_usd > 0
        else:
            assert run.cost_usd is None
        if CLIS[rh.cli].reports_model:
            assert run.actual_model
        # The effort a run records is what its CLI was started with.
        ran_with = (run.reasoning_effort or None) if record.takes_effort else None
        assert run.actual_reasoning_effort == ran_with


async def test_operator_direct_builder_commit_and_reviewer_git_show(real, cli) -> None:
    rh = await real({"greeting": INTENT})
    rh.model.script(
        Say(direct(cli)),
        *build("greet.py", GREET, "Add greet()"),
        Shell("git show --stat HEAD"),
        judge_what_git_show_showed,
    )
    await rh.h.board.act("greeting", Action.START, actor=OWNER)
    await rh.run_until_idle()

    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, (card.failure_stage, card.failure_detail)
    # The real tool call wrote the file in the card's worktree; the bot committed it.
    worktree = rh.h.config.bot.workspaces / "greeting"
    assert git(rh.h.repo, "show", f"{card.commit_hash}:greet.py") == GREET.strip()
    assert git(rh.h.repo, "log", "-1", "--format=%s %an", card.commit_hash) == (
        "Add greet() intent-board"
    )
    assert not (rh.h.repo / "greet.py").exists()  # the main checkout is untouched
    operator, builder, tool_done, reviewer, judged = rh.model.seen
    assert "OPERATOR-DECISION" in operator.prompt and operator.cwd == str(rh.h.repo)
    assert builder.cwd == str(worktree) and "COMMIT-MESSAGE" in builder.prompt
    assert len(tool_done.tool_results) == 1
    # The reviewer ran `git show` read-only in the worktree and saw the builder's commit.
    assert reviewer.cwd == str(worktree) and card.commit_hash in reviewer.prompt
    assert card.commit_hash in judged.tool_results[0] and "greet.py" in judged.tool_results[0]
    assert card.data.reviews[-1]["commit"] == card.commit_hash
    await assert_runs_recorded(rh, "greeting", ["operator", "builder", "reviewer"])
    runs = {run.role: run for run in await rh.runs("greeting")}
    assert runs["operator"].input_tokens == 100  # one model response
    assert runs["builder"].input_tokens == 200  # the tool call, then the answer


async def test_builder_continues_its_real_session(real, cli) -> None:
    rh = await real({"greeting": INTENT})
    rh.model.script(
        Say(direct(cli)),
        Say("Still working: the module comes next."),
        *build("greet.py", GREET, "Add greet()"),
        judge_the_commit_in_the_prompt,
    )
    await rh.h.board.act("greeting", Action.START, actor=OWNER)
    await rh.run_until_idle()

    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    _, first, resumed, _, _ = rh.model.seen
    # The second builder run resumed the first one's session, with its history.
    assert resumed.session == first.session
    assert "Still working: the module comes next." in resumed.assistant_texts
    assert first.prompt in resumed.user_texts
    assert resumed.prompt.startswith("Continue the same task")
    runs = [run for run in await rh.runs("greeting") if run.role == "builder"]
    assert runs[0].session_id and [run.session_id for run in runs] == [runs[0].session_id] * 2
    # Each run records only its own share (codex reports the thread's usage cumulatively).
    assert [run.input_tokens for run in runs] == [100, 200]
    await assert_runs_recorded(rh, "greeting", ["operator", "builder", "builder", "reviewer"])


async def test_operator_split_children_are_built_in_order(real, cli) -> None:
    rh = await real({"report": "# Report\n\nTwo parts.\n"})
    decision = operator_answer(
        {
            "decision": "split",
            "children": [
                split_child(cli, "part-a", 1, []),
                split_child(cli, "part-b", 2, ["part-a"]),
            ],
        }
    )
    rh.model.script(
        Say(decision),
        *build("part-a/a.txt", "a\n", "Add part a"),
        judge_the_commit_in_the_prompt,
        *build("part-b/b.txt", "b\n", "Add part b"),
        judge_the_commit_in_the_prompt,
        # The synthesis looks at a child's commit with its real tools, then sums up.
        lambda seen: Shell(f"git show --stat {re.findall(r'[0-9a-f]{40}', seen.prompt)[-1]}"),
        Say(synthesis_answer(["part-a", "part-b"], gaps=["No index page links the parts."])),
    )
    await rh.h.board.act("report", Action.START, actor=OWNER)
    await rh.run_until_idle()

    parent = await rh.h.board.reads.card("report")
    kids = {k.slug: k for k in await card_store.children(rh.h.store.reader, parent.id)}
    assert parent.phase is Phase.DONE, (parent.failure_detail, [k.phase for k in kids.values()])
    summing, summed = rh.model.seen[-2:]
    assert summing.cwd == str(rh.h.repo) and "SYNTHESIS-RESULT" in summing.prompt
    assert kids["part-a"].commit_hash in summing.prompt
    assert "part-b/b.txt" in summed.tool_results[-1]
    assert "Both parts are in." in (rh.h.repo / "docs/review/report.md").read_text()
    assert parent.data.synthesis["gaps"] == ["No index page links the parts."]
    # One pipeline: the parent's id on its children and on every run, through the real CLIs.
    assert {k.pipeline_run_id for k in kids.values()} == {parent.pipeline_run_id}
    _, runs = await rh.h.board.reads.pipeline_runs(parent.pipeline_run_id)
    assert len(runs) == 6 and all(run.accepted for _, run in runs)
    assert {slug: kid.phase for slug, kid in kids.items()} == {
        "part-a": Phase.READY_FOR_DEPLOYMENT,
        "part-b": Phase.READY_FOR_DEPLOYMENT,
    }
    assert git(rh.h.repo, "show", f"{kids['part-b'].commit_hash}:part-b/b.txt") == "b"
    builder_dirs = [
        Path(s.cwd).name
        for s in rh.model.seen
        if "COMMIT-MESSAGE" in s.prompt and not s.tool_results
    ]
    assert builder_dirs == ["part-a", "part-b"]


async def test_operator_needs_human_then_runs_again_with_the_answer(real, cli) -> None:
    rh = await real({"report": "# Report\n"})
    ask = operator_answer(
        {
            "decision": "needs_human",
            "reason": "storage unclear",
            "human_action": "Where should the report go?\noptions: S3 | local disk",
        }
    )
    rh.model.script(Say(ask), Say(direct(cli)), *build("report.py", "x = 1\n", "Add report"))
    rh.model.script(judge_the_commit_in_the_prompt)
    await rh.h.board.act("report", Action.START, actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("report")
    assert card.phase is Phase.NEEDS_HUMAN
    asked = await question_store.open_for_card(rh.h.store.reader, card.id)
    assert (asked.text, asked.options) == ("Where should the report go?", ["S3", "local disk"])

    await rh.h.board.answer("report", "local disk", actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("report")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    first, again = (s for s in rh.model.seen if "OPERATOR-DECISION" in s.prompt)
    assert "local disk" not in first.prompt and "Owner's answer: local disk" in again.prompt


async def test_planner_draft_asks_then_writes_an_intent_with_no_repository(real, cli) -> None:
    rh = await real({})
    rh.model.script(
        Say("===DRAFT-QUESTION===\nWhich format?\noptions: CSV | PDF\n===END-DRAFT-QUESTION==="),
        Say(
            "===DRAFT-INTENT===\nslug: monthly-csv\n---\n# Monthly CSV export\n\nGoal.\n"
            "===END-DRAFT-INTENT==="
        ),
    )
    draft = await rh.h.board.start_draft("I need the monthly numbers", actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card(draft.slug)
    assert card.phase is Phase.DRAFT_QUESTION, (card.failure_stage, card.failure_detail)
    asked = await question_store.open_for_card(rh.h.store.reader, card.id)
    assert (asked.text, asked.options) == ("Which format?", ["CSV", "PDF"])

    await rh.h.board.answer(draft.slug, "CSV", actor=OWNER)
    await rh.run_until_idle()
    final = await rh.h.board.reads.card("monthly-csv")
    assert (final.id, final.kind, final.phase) == (card.id, Kind.INTENT, Phase.PLANNED)
    assert (rh.h.repo / "docs/intent/monthly-csv.md").read_text().startswith("# Monthly CSV")
    first, second = rh.model.seen
    assert "I need the monthly numbers" in first.prompt
    assert "CSV" in second.prompt and "Which format?" in second.prompt
    # No repository: each turn ran in an empty folder of its own, outside the repository.
    for seen in (first, second):
        assert seen.cwd and Path(seen.cwd).name.startswith("draft-")
        assert not Path(seen.cwd).is_relative_to(rh.h.root)


async def test_split_planner_writes_the_children(real, cli) -> None:
    rh = await real({"report": "# Report\n\nToo big.\n"})
    rh.model.script(
        Say(
            "===SPLIT-REPORT===\n"
            "===CHILD===\nslug: report-data\n---\n# Report data\n\nCollect.\n===END-CHILD===\n"
            "===CHILD===\nslug: report-layout\n---\n# Report layout\n\nLay out.\n===END-CHILD===\n"
            "===END-SPLIT-REPORT==="
        )
    )
    await rh.h.board.act("report", Action.SPLIT, actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("report")
    assert card.phase is Phase.SPLIT, card.failure_detail
    kids = await card_store.children(rh.h.store.reader, card.id)
    assert sorted((k.slug, k.phase) for k in kids) == [
        ("report-data", Phase.PLANNED),
        ("report-layout", Phase.PLANNED),
    ]
    assert (rh.h.repo / "docs/intent/report-layout.md").read_text().startswith("# Report layout")
    assert rh.model.seen[0].cwd == str(rh.h.repo) and "SPLIT-REPORT" in rh.model.seen[0].prompt


async def test_researcher_looks_around_and_its_report_is_written(real, cli) -> None:
    rh = await real({})
    research = rh.h.repo / "docs/research-intent/pick-db.md"
    research.parent.mkdir(parents=True)
    research.write_text("# Which database?\n")
    await rh.h.board.import_cards()
    rh.model.script(
        Look("docs/research-intent"),
        Say("===RESEARCH-REPORT===\n# Findings\n\nUse SQLite.\n===END-RESEARCH-REPORT==="),
    )
    await rh.h.board.act("pick-db", Action.RESEARCH, actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("pick-db")
    assert card.phase is Phase.RESEARCH_DONE, card.failure_detail
    assert "Use SQLite." in (rh.h.repo / "docs/research/pick-db.md").read_text()
    assert "pick-db.md" in rh.model.seen[1].tool_results[0]


INSPECTION = {
    "schema_version": 1,
    "mode": "implementation_status",
    "repository_status": "missing",
    "deployment_status": "deployed",  # a claim the board's own evidence overrules
    "checked_revision": None,
    "repository_evidence": [{"source": "ls", "finding": "no greet.py"}],
    "deployment_evidence": [{"source": "my guess", "finding": "it is live"}],
    "summary": "Not built yet.",
    "question": None,
    "required_action": None,
}
ROUTING = {
    "schema_version": 1,
    "mode": "route_next",
    "outcome": "recommendation",
    "recommended_action": "building_light",
    "basis": [{"source": "intent", "finding": "small and clear"}],
    "summary": "Build it on the light lane.",
    "question": None,
    "required_action": None,
}


@pytest.mark.parametrize("mode", ["implementation_status", "route_next"])
async def test_inspector_in_both_modes(real, cli, mode: str) -> None:
    rh = await real({"greeting": INTENT})
    marker = "INSPECTION_RESULT" if mode == "implementation_status" else "ROUTING_RESULT"
    answer = INSPECTION if mode == "implementation_status" else ROUTING
    # It looks around and reads the history with git, as its prompt asks.
    rh.model.script(
        Look(),
        Shell("git log --oneline -1"),
        Say(f"==={marker}===\n{json.dumps(answer)}\n===END_{marker}==="),
    )
    await rh.h.board.act("greeting", Action.INSPECT, actor=OWNER, payload={"mode": mode})
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.PLANNED, (card.failure_stage, card.failure_detail)
    found = card.data.inspection
    assert found["mode"] == mode and found["summary"] == answer["summary"]
    if mode == "route_next":
        assert found["recommended_action"] == "building_light" and found["pending"] is True
    else:
        assert found["deployment_status"] == "not_deployed"
        assert found["model_deployment_status"] == "deployed"
        assert found["deployment_status_discrepancy"] is True
        assert found["deployment_evidence"][0]["source"] == "intent board"
    assert marker in rh.model.seen[0].prompt and "README.md" in rh.model.seen[1].tool_results[0]
    assert "initial" in rh.model.seen[2].tool_results[1]


async def test_a_read_only_role_cannot_change_the_repository(real, cli) -> None:
    rh = await real({"greeting": INTENT})
    before = tree_snapshot(rh.h.repo)
    rh.model.script(
        WriteFile("greet.py", GREET),
        Shell("touch docs/intent/greeting.md && echo changed >> README.md"),
        Say(f"===INSPECTION_RESULT===\n{json.dumps(INSPECTION)}\n===END_INSPECTION_RESULT==="),
    )
    await rh.h.board.act("greeting", Action.INSPECT, actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.PLANNED, card.failure_detail
    # Refused by the real CLI's sandbox or permission mode: nothing changed.
    assert tree_snapshot(rh.h.repo) == before
    assert git(rh.h.repo, "status", "--porcelain") == ""
    refusals = rh.model.seen[-1].tool_results
    assert len(refusals) == 2
    assert CLIS[cli].refused_write in refusals[0], refusals
    # The inspector holds the git reads: its other commands are refused as a reviewer's.
    assert any(said in refusals[1] for said in CLIS[cli].refused_with_grants), refusals
    assert not CLIS[cli].write_tools & rh.model.seen[0].tools


async def test_fixer_repairs_a_failed_card_and_its_commit_is_reviewed(real, cli) -> None:
    rh = await real({"greeting": INTENT})
    # The builder claims a commit but changes nothing: the card fails at the builder.
    rh.model.script(Say(direct(cli)), Say(builder_answer("Add greet()")))
    await rh.h.board.act("greeting", Action.START, actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("greeting")
    assert (card.phase, card.failure_stage) == (Phase.FAILED, "builder")
    assert "changed no file" in card.failure_detail

    # The fixer asks once, then fixes with the owner's answer; its commit is reviewed.
    rh.model.script(
        Say("===FIXER-QUESTION===\nKeep the old API?\noptions: yes | no\n===END-FIXER-QUESTION==="),
        *build("greet.py", GREET, "Fix: add greet()"),
        judge_the_commit_in_the_prompt,
    )
    await rh.h.board.act("greeting", Action.FIX, actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.FIXER_QUESTION, card.failure_detail
    await rh.h.board.answer("greeting", "yes", actor=OWNER)
    await rh.run_until_idle()
    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    assert git(rh.h.repo, "show", f"{card.commit_hash}:greet.py") == GREET.strip()
    asked, fixed = (s for s in rh.model.seen if "FIXER-QUESTION" in s.prompt and not s.tool_results)
    for fixer in (asked, fixed):
        assert fixer.cwd == str(rh.h.config.bot.workspaces / "greeting")
        assert "changed no file" in fixer.prompt
    assert "Keep the old API?" in fixed.prompt and "yes" in fixed.prompt
    # A fresh session for each fixer round (both are sessions the CLI used: below).
    first, second = (run for run in await rh.runs("greeting") if run.role == "fixer")
    assert first.session_id != second.session_id
    await assert_runs_recorded(
        rh, "greeting", ["operator", "builder", "fixer", "fixer", "reviewer"]
    )
