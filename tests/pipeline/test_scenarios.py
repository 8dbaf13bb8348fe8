"""Every role's result applied through the real worker, the fake CLIs and a real git repo."""

from __future__ import annotations

import json
from pathlib import Path

from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.store import cards as card_store
from chatbot.store import questions as question_store
from tests.pipeline.harness import (
    builder_answer,
    child,
    direct,
    git,
    operator_answer,
    review_answer,
    start,
)

OWNER = "owner@example.org"
INTENT = "# Reporting\n\nBuild the monthly report.\n"


def builds(*names: str) -> list[dict]:
    return [
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": builder_answer(f"Add {name}"),
            "files": {f"{name}.txt": f"{name}\n"},
        }
        for name in names
    ]


APPROVE_ALL = {"match": "REVIEW-RESULT", "answer": review_answer("approve"), "repeat": True}


async def test_split_into_three_children_built_in_dependency_order(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    decision = operator_answer(
        {
            "decision": "split",
            "children": [
                child("part-a", 1, [], "src/a/**"),
                child("part-b", 2, ["part-a"], "src/b/**"),
                child("part-c", 3, ["part-b"], "src/c/**"),
            ],
        }
    )
    turns = [
        {"match": "OPERATOR-DECISION", "answer": decision},
        *builds("one", "two", "three"),
        APPROVE_ALL,
    ]
    h = await start(tmp_path, turns, {"report": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)

    await h.board.act("report", Action.START, actor=OWNER)
    await h.run_until_idle()

    parent = await h.board.card("report")
    assert parent.phase is Phase.DONE
    kids = {c.slug: c for c in await card_store.children(h.store.reader, parent.id)}
    assert set(kids) == {"part-a", "part-b", "part-c"}
    assert all(k.phase is Phase.READY_FOR_DEPLOYMENT for k in kids.values())
    assert await card_store.blocked_by(h.store.reader, kids["part-c"].id) == ["part-b"]
    for slug in kids:
        assert (
            h.repo / "docs" / "intent" / f"{slug}.md"
        ).read_text() == f"# Part {slug}\n\nDo {slug}.\n"
    # Built strictly one after another, in the order of the dependency chain.
    builder_dirs = [Path(c["cwd"]).name for c in h.calls() if "workspace-write" in c["argv"]]
    assert builder_dirs == ["part-a", "part-b", "part-c"]
    start_events = {}
    for slug, kid in kids.items():
        history = await card_store.events(h.store.reader, kid.id)
        start_events[slug] = next(e.at for e in history if e.action == "child_started")
        done_at = next(e.at for e in history if e.to_phase is Phase.READY_FOR_DEPLOYMENT)
        start_events[slug + ":done"] = done_at
    assert start_events["part-b"] >= start_events["part-a:done"]
    assert start_events["part-c"] >= start_events["part-b:done"]


async def test_needs_human_answered_reruns_the_operator_with_the_answer(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    question = operator_answer(
        {
            "decision": "needs_human",
            "reason": "storage unclear",
            "human_action": "Should the report go to S3 or to the local disk?",
        }
    )
    turns = [
        {"match": "OPERATOR-DECISION", "answer": question},
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        *builds("report"),
        APPROVE_ALL,
    ]
    h = await start(tmp_path, turns, {"report": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("report", Action.START, actor=OWNER)
    await h.run_until_idle()

    card = await h.board.card("report")
    assert card.phase is Phase.NEEDS_HUMAN
    asked = await question_store.open_for_card(h.store.reader, card.id)
    assert asked.text == "Should the report go to S3 or to the local disk?"

    await h.board.answer("report", "Local disk, under /var/reports.", actor=OWNER)
    await h.run_until_idle()

    card = await h.board.card("report")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT
    operator_prompts = h.prompts_of("OPERATOR-DECISION")
    assert len(operator_prompts) == 2
    assert "Local disk, under /var/reports." not in operator_prompts[0]
    assert "Local disk, under /var/reports." in operator_prompts[1]
    assert (await question_store.get(h.store.reader, asked.id)).state == "answered"


async def test_limit_reached_twice_then_ladder_spent_then_split(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    ladder = [
        {"model": "gpt-5-codex", "reasoning_effort": "high", "iteration_limit": 5},
        {"model": "gpt-5-codex-max", "reasoning_effort": "", "iteration_limit": 6},
    ]
    split = (
        "===SPLIT-REPORT===\n"
        "===CHILD===\nslug: report-data\n---\n# Report data\n\nCollect the numbers.\n===END-CHILD===\n"
        "===CHILD===\nslug: report-layout\n---\n# Report layout\n\nLay them out.\n===END-CHILD===\n"
        "===END-SPLIT-REPORT==="
    )
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light", ladder)},
        {"match": "SPLIT-REPORT", "answer": split},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": "Still working on it.",
            "files": {"wip.txt": "partial\n"},
            "repeat": True,
        },
    ]
    h = await start(tmp_path, turns, {"report": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("report", Action.START, actor=OWNER)
    await h.run_until_idle()

    card = await h.board.card("report")
    assert card.phase is Phase.PLANNING_WITH_FEEDBACK
    assert card.data["limit_reached"] is True and card.escalation_step == 2
    builder_calls = [c for c in h.calls() if "workspace-write" in c["argv"]]
    models = [c["argv"][c["argv"].index("--model") + 1] for c in builder_calls]
    assert models == ["gpt-5-codex-mini"] * 5 + ["gpt-5-codex"] * 5 + ["gpt-5-codex-max"] * 6
    # Each iteration after the first resumes the same agent session.
    assert sum("resume" in c["argv"] for c in builder_calls) == 16 - 3
    actions = [e.action for e in await card_store.events(h.store.reader, card.id)]
    assert actions.count("build_escalated") == 2 and actions[-1] == "build_limit_spent"

    await h.board.act("report", Action.SPLIT, actor=OWNER)
    await h.run_until_idle()
    card = await h.board.card("report")
    assert card.phase is Phase.SPLIT
    kids = await card_store.children(h.store.reader, card.id)
    assert sorted((k.slug, k.phase, k.title) for k in kids) == [
        ("report-data", Phase.PLANNED, "Report data"),
        ("report-layout", Phase.PLANNED, "Report layout"),
    ]
    assert (h.repo / "docs" / "intent" / "report-data.md").exists()
    # The planner saw the builder's last report.
    assert "Still working on it." in h.prompts_of("SPLIT-REPORT")[0]


async def test_review_reject_keeps_the_report(tmp_path: Path, monkeypatch, harnesses) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("heavy")},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "claude",
            "answer": builder_answer("Add report"),
            "files": {"report.py": "x = 1\n"},
        },
        {"match": "REVIEW-RESULT", "answer": review_answer("reject", "Missing tests.")},
    ]
    h = await start(tmp_path, turns, {"report": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("report", Action.START, actor=OWNER)
    await h.run_until_idle()
    card = await h.board.card("report")
    assert card.phase is Phase.PLANNING_WITH_FEEDBACK
    assert card.review_decision == "reject"
    assert card.data["reviews"][-1]["report"].endswith("Missing tests.")
    assert card.data["reviews"][-1]["commit"] == card.commit_hash
    assert "Missing tests." in (h.repo / "docs" / "review" / "report.md").read_text()
    heavy = next(c for c in h.calls() if "--max-turns" in c["argv"])
    assert heavy["argv"][heavy["argv"].index("--max-turns") + 1] == "5"


async def test_draft_two_questions_then_an_intent(tmp_path: Path, monkeypatch, harnesses) -> None:
    turns = [
        {
            "match": "DRAFT-QUESTION",
            "answer": "===DRAFT-QUESTION===\nWhich format?\noptions: CSV | PDF\n===END-DRAFT-QUESTION===",
        },
        {
            "match": "DRAFT-QUESTION",
            "answer": "===DRAFT-QUESTION===\nHow often?\noptions: none\n===END-DRAFT-QUESTION===",
        },
        {
            "match": "DRAFT-QUESTION",
            "answer": "===DRAFT-INTENT===\nslug: monthly-csv\n---\n# Monthly CSV export\n\nGoal.\n"
            "===END-DRAFT-INTENT===",
        },
    ]
    h = await start(tmp_path, turns, {}, monkeypatch=monkeypatch)
    harnesses.append(h)
    draft = await h.board.start_draft("I need an export of the monthly numbers", actor=OWNER)
    await h.run_until_idle()
    card = await h.board.card(draft.slug)
    assert card.phase is Phase.DRAFT_QUESTION
    first = await question_store.open_for_card(h.store.reader, card.id)
    assert (first.text, first.options) == ("Which format?", ["CSV", "PDF"])
    await h.board.answer(draft.slug, "CSV", actor=OWNER)
    await h.run_until_idle()
    second = await question_store.open_for_card(h.store.reader, card.id)
    assert (second.text, second.options) == ("How often?", [])
    await h.board.answer(draft.slug, "Every month, on the first", actor=OWNER)
    await h.run_until_idle()

    final = await h.board.card("monthly-csv")
    assert (final.id, final.kind, final.phase) == (card.id, Kind.INTENT, Phase.PLANNED)
    assert final.title == "Monthly CSV export"
    assert (h.repo / "docs" / "intent" / "monthly-csv.md").read_text().startswith("# Monthly CSV")
    said = [turn[1] for turn in final.data["conversation"]]
    assert said[:5] == [
        "I need an export of the monthly numbers",
        "Which format?",
        "CSV",
        "How often?",
        "Every month, on the first",
    ]
    third_prompt = h.prompts_of("DRAFT-QUESTION")[2]
    assert "Every month, on the first" in third_prompt and "CSV" in third_prompt
    # The intake planner saw no repository: it ran in an empty folder, read-only.
    draft_calls = [c for c in h.calls() if "DRAFT-QUESTION" in c["stdin"]]
    assert all("read-only" in c["argv"] and Path(c["cwd"]) != h.repo for c in draft_calls)
    assert await card_store.get(h.store.reader, draft.slug) is None


async def test_research_report_is_written(tmp_path: Path, monkeypatch, harnesses) -> None:
    turns = [
        {
            "match": "RESEARCH-REPORT",
            "answer": "===RESEARCH-REPORT===\n# Findings\n\nUse SQLite.\n===END-RESEARCH-REPORT===",
        }
    ]
    h = await start(tmp_path, turns, {}, monkeypatch=monkeypatch)
    harnesses.append(h)
    (h.repo / "docs" / "research-intent").mkdir(parents=True)
    (h.repo / "docs" / "research-intent" / "pick-db.md").write_text("# Which database?\n")
    await h.board.import_cards()
    await h.board.act("pick-db", Action.RESEARCH, actor=OWNER)
    await h.run_until_idle()
    card = await h.board.card("pick-db")
    assert card.phase is Phase.RESEARCH_DONE
    assert "Use SQLite." in (h.repo / "docs" / "research" / "pick-db.md").read_text()
    phases = [e.to_phase for e in await card_store.events(h.store.reader, card.id)]
    assert phases == [
        Phase.PLANNED,
        Phase.RESEARCH_REQUESTED,
        Phase.RESEARCH_RUNNING,
        Phase.RESEARCH_DONE,
    ]


async def test_inspector_model_claim_is_replaced_by_trusted_evidence(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    claim = {
        "schema_version": 1,
        "mode": "implementation_status",
        "repository_status": "missing",
        "deployment_status": "deployed",
        "checked_revision": None,
        "repository_evidence": [{"source": "ls", "finding": "no report module"}],
        "deployment_evidence": [{"source": "my guess", "finding": "it is live"}],
        "summary": "Not built yet.",
        "question": None,
        "required_action": None,
    }
    turns = [
        {
            "match": "INSPECTION_RESULT",
            "answer": f"===INSPECTION_RESULT===\n{json.dumps(claim)}\n===END_INSPECTION_RESULT===",
        }
    ]
    h = await start(tmp_path, turns, {"report": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("report", Action.INSPECT, actor=OWNER)
    await h.run_until_idle()
    card = await h.board.card("report")
    assert card.phase is Phase.PLANNED  # back where the inspection started
    found = card.data["inspection"]
    assert found["deployment_status"] == "not_deployed"
    assert found["model_deployment_status"] == "deployed"
    assert found["deployment_status_discrepancy"] is True
    assert found["deployment_evidence"][0]["source"] == "intent board"


async def test_fixer_asks_once_then_commits_and_goes_to_review(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [
        {
            "match": "FIXER-QUESTION",
            "answer": "===FIXER-QUESTION===\nKeep the old API?\noptions: yes | no\n===END-FIXER-QUESTION===",
        },
        {
            "match": "FIXER-QUESTION",
            "answer": builder_answer("Fix the report"),
            "files": {"report.py": "fixed = True\n"},
        },
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": "boom",
            "exit_code": 1,
            "stderr": "agent crashed",
        },
        APPROVE_ALL,
    ]
    h = await start(tmp_path, turns, {"report": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("report", Action.START, actor=OWNER)
    await h.run_until_idle()
    card = await h.board.card("report")
    assert (card.phase, card.failure_stage) == (Phase.FAILED, "builder")
    assert "agent crashed" in card.failure_detail or "exit" in card.failure_detail

    await h.board.act("report", Action.FIX, actor=OWNER)
    await h.run_until_idle()
    card = await h.board.card("report")
    assert card.phase is Phase.FIXER_QUESTION
    await h.board.answer("report", "yes", actor=OWNER)
    await h.run_until_idle()

    card = await h.board.card("report")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    assert git(h.repo, "show", f"{card.commit_hash}:report.py") == "fixed = True"
    fixer_prompts = h.prompts_of("FIXER-QUESTION")
    assert "yes" in fixer_prompts[1] and "Keep the old API?" in fixer_prompts[1]
