"""An operator split end to end (issue 16): the children's acceptance criteria in their
builder's and reviewer's prompts and in `/status`, one pipeline run id across the parent,
its children and every run, and the synthesis that sums the children up at the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.app.views import view_json
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store import telemetry
from tests.inprocess import in_thread
from tests.pipeline.harness import (
    builder_answer,
    child,
    operator_answer,
    review_answer,
    start,
    synthesis_answer,
)
from tests.pipeline.room import open_room
from tests.pipeline.support import OWNER, kill_strays, run_idle

INTENT = "# Report\n\nA report in two parts, with a migration.\n"
CRITERIA = {
    "part-a": ["part-a/a.txt holds the letter a", "the a-test passes"],
    "part-b": ["part-b/b.txt holds the letter b"],
}


def split_decision() -> str:
    children = []
    for slug, wave, blocked in (("part-a", 1, []), ("part-b", 2, ["part-a"])):
        found = child(slug, wave, blocked)
        children.append({**found, "acceptance_criteria": CRITERIA[slug]})
    return operator_answer({"decision": "split", "children": children})


def build(slug: str) -> dict:
    return {
        "match": f"Do {slug}.",
        "cli": "codex",
        "answer": builder_answer(f"Add {slug}"),
        "files": {f"src/{slug}/{slug[-1]}.txt": f"{slug[-1]}\n"},
    }


APPROVE = {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer(), "repeat": True}


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    yield
    for h in list(harnesses):
        kill_strays(h)


async def test_operator_split_end_to_end(tmp_path: Path, monkeypatch, harnesses) -> None:
    synthesis = synthesis_answer(
        ["part-a", "part-b"], gaps=["No child adds the migration the intent asks for."]
    )
    turns = [
        {"match": "SYNTHESIS-RESULT", "answer": synthesis},
        {"match": "OPERATOR-DECISION", "answer": split_decision()},
        build("part-a"),
        build("part-b"),
        APPROVE,
    ]
    h = await start(tmp_path, turns, {"report": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    room = open_room(h)
    await room.say("/start report")
    await run_idle(h)

    parent = await h.board.reads.card("report")
    kids = {kid.slug: kid for kid in await h.board.reads.children_of(parent.id)}
    assert parent.phase is Phase.DONE, (parent.phase, parent.failure_detail)
    assert {slug: kid.phase for slug, kid in kids.items()} == {
        "part-a": Phase.READY_FOR_DEPLOYMENT,
        "part-b": Phase.READY_FOR_DEPLOYMENT,
    }

    # Each child's builder and reviewer were given exactly its own acceptance criteria.
    calls = h.calls()
    for slug, criteria in CRITERIA.items():
        other = next(s for s in CRITERIA if s != slug)
        prompts = [c["stdin"] for c in calls if f"Do {slug}." in c["stdin"]]
        builder = [p for p in prompts if "COMMIT-MESSAGE" in p]
        reviewer = [p for p in prompts if "REVIEW-RESULT" in p]
        assert len(builder) == 1 and len(reviewer) == 1, slug
        for prompt in (builder[0], reviewer[0]):
            section = prompt.split("## Acceptance criteria", 1)[1].split("\n## ", 1)[0]
            for criterion in criteria:
                assert f"- {criterion}" in section, (slug, section)
            assert CRITERIA[other][0] not in prompt
        assert "reject" in reviewer[0].split("## Acceptance criteria")[0]
        assert "git grep -F" in reviewer[0]
        # The reviewer on Claude was granted exactly its git commands, none that writes,
        # and the one tool of the bot's a reading role has (pipeline/run_tools.py).
        argv = next(c["argv"] for c in calls if c["stdin"] == reviewer[0])
        assert argv[argv.index("--allowedTools") + 1] == (
            "Bash(git show *) Bash(git diff *) Bash(git log *) mcp__board__card_context"
        )
        assert "Bash(git * --output*)" in argv[argv.index("--disallowedTools") + 1]
    # /status <slug> shows them.
    status = await room.say("/status part-a")
    assert "acceptance criteria:" in status
    assert "  - part-a/a.txt holds the letter a" in status and "  - the a-test passes" in status

    # One pipeline run id: the parent's, carried by the children and by every run.
    pipeline = parent.pipeline_run_id
    assert pipeline and {kid.pipeline_run_id for kid in kids.values()} == {pipeline}
    assert view_json(await h.board.reads.view("report"))["pipeline_run_id"] == pipeline
    assert view_json(await h.board.reads.view("part-b"))["pipeline_run_id"] == pipeline
    _, runs = await h.board.reads.pipeline_runs(pipeline)
    assert sorted((slug, run.role) for slug, run in runs) == [
        ("part-a", "builder"),
        ("part-a", "reviewer"),
        ("part-b", "builder"),
        ("part-b", "reviewer"),
        ("report", "operator"),
        ("report", "synthesis"),
    ]
    assert {run.pipeline_run_id for _, run in runs} == {pipeline}
    assert all(run.accepted for _, run in runs)
    # /runs <pipeline id> lists them, so does /runs <slug> (that card's pipeline).
    listed = await room.say(f"/runs {pipeline}")
    assert f"Runs of pipeline {pipeline} (6," in listed
    assert "part-b reviewer" in listed and "report synthesis" in listed
    assert f"Runs of pipeline {pipeline}" in await room.say("/runs part-a")
    assert f"pipeline: {pipeline}" in await room.say("/status report")
    # ...and so does the shell.
    shell = await in_thread(
        "runs", "--pipeline", pipeline, "--json", "--config", str(h.root / "bot.toml")
    )
    assert shell.returncode == 0, shell.stderr
    document = json.loads(shell.stdout)
    assert document["pipeline_run_id"] == pipeline
    assert [run["card"] for run in document["runs"]].count("part-a") == 2

    # The synthesis saw both children's commits and criteria, wrote its report, posted it.
    summed = next(c["stdin"] for c in calls if "SYNTHESIS-RESULT" in c["stdin"])
    for kid in kids.values():
        assert kid.commit_hash in summed
    assert "part-b/b.txt holds the letter b" in summed
    assert "A report in two parts, with a migration." in summed
    report = (h.repo / "docs/review/report.md").read_text()
    assert report.startswith("# Synthesis") and "Both parts are in." in report
    assert parent.review_report_path == "docs/review/report.md"
    posted = "\n".join(row.text for row in await room.rows())
    assert "report: all children succeeded; the synthesis of their results runs." in posted
    assert "report: the synthesis of its children is in docs/review/report.md" in posted
    assert "1 gap against the intent:\n- No child adds the migration" in posted
    assert "synthesis of the children: docs/review/report.md (1 gap" in await room.say(
        "/status report"
    )
    synthesis_run = next(run for _, run in runs if run.role == "synthesis")
    assert synthesis_run.runtime == "codex" and synthesis_run.outcome == "ok"


async def test_a_failed_synthesis_is_retried_or_skipped(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [
        # The first synthesis leaves out a child: rejected, nothing written.
        {"match": "SYNTHESIS-RESULT", "answer": synthesis_answer(["part-a"])},
        {"match": "SYNTHESIS-RESULT", "answer": synthesis_answer(["part-a", "part-b"])},
        {"match": "OPERATOR-DECISION", "answer": split_decision()},
        build("part-a"),
        build("part-b"),
        APPROVE,
    ]
    h = await start(tmp_path, turns, {"report": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    room = open_room(h)
    await h.board.act("report", Action.START, actor=OWNER)
    await run_idle(h)

    parent = await h.board.reads.card("report")
    assert (parent.phase, parent.failure_stage) == (Phase.SYNTHESIS_FAILED, "synthesis")
    assert "leaves out part-b" in parent.failure_detail
    assert not (h.repo / "docs/review/report.md").exists()
    posted = "\n".join(row.text for row in await room.rows())
    assert "/retry report runs it again; /cancel report marks the card done" in posted
    failed_run = (await telemetry.for_card(h.store.reader, parent.id))[0]
    assert (failed_run.role, failed_run.accepted) == ("synthesis", False)

    assert "synthesis running" in await room.say("/retry report")
    await run_idle(h)
    parent = await h.board.reads.card("report")
    assert parent.phase is Phase.DONE and parent.failure_stage is None
    assert "Both parts are in." in (h.repo / "docs/review/report.md").read_text()


async def test_a_synthesis_may_be_dropped_and_the_parent_is_done(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "SYNTHESIS-RESULT", "answer": "no blocks at all"},
        {"match": "OPERATOR-DECISION", "answer": split_decision()},
        build("part-a"),
        build("part-b"),
        APPROVE,
    ]
    h = await start(tmp_path, turns, {"report": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    await h.board.act("report", Action.START, actor=OWNER)
    await run_idle(h)
    assert (await h.board.reads.card("report")).phase is Phase.SYNTHESIS_FAILED
    card = await h.board.act("report", Action.CANCEL, actor=OWNER)
    assert card.phase is Phase.DONE
    await run_idle(h)
    assert (await h.board.reads.card("report")).phase is Phase.DONE
