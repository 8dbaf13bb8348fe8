"""How runs fail, through the board service and the real worker, with the fake CLIs.

Timeouts and cancellation must leave no process of a run behind; a broken answer
must leave no file and no partial state; a missing binary and the OpenRouter key
must be handled as the design says.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import uuid
from pathlib import Path

import pytest

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store import cards as card_store
from chatbot.store import telemetry
from runners.process import ProcessLimits
from tests.pipeline.harness import (
    BIN,
    builder_answer,
    direct,
    git,
    operator_answer,
    review_answer,
    start,
)
from tests.pipeline.support import (
    CONTROL_CHARS,
    OWNER,
    Fifo,
    assert_group_gone,
    configure,
    dump_database,
    jobs_of,
    kill_strays,
    operator_role,
    run_idle,
    tree_snapshot,
)

INTENT = "# Greeting module\n\nAdd `greet.py` with a `greet()` function.\n"
PASS_ENV = '["FAKE_CLI_SCENARIO", "FAKE_CLI_STATE", "FAKE_CLI_LOG"]'


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    # A failing test must not leave a hanging fake or its helper behind.
    yield
    for h in list(harnesses):
        kill_strays(h)


def only_call(h, marker: str) -> dict:
    calls = [c for c in h.calls() if marker in c.get("stdin", "")]
    assert len(calls) == 1, calls
    return calls[0]


def assert_clean_detail(detail: str | None) -> str:
    assert detail, "the card carries no failure detail"
    assert len(detail) <= 240, len(detail)
    assert not CONTROL_CHARS.search(detail), repr(detail)
    return detail


# --- timeouts kill the whole process group ------------------------------------


@pytest.mark.parametrize(
    ("role_config", "turn", "expected"),
    [
        pytest.param(
            "timeout_s = 1\nidle_timeout_s = 30\n",
            # Trickling stderr keeps the no-output watchdog quiet: only the wall clock
            # can stop it. Ignoring SIGTERM (the helper inherits it) forces the SIGKILL.
            {"hang": "trickle", "spawn_child": True, "ignore_sigterm": True},
            "timed out after 1s",
            id="role-timeout",
        ),
        pytest.param(
            "timeout_s = 30\nidle_timeout_s = 1\n",
            {"hang": "before_output", "spawn_child": True},
            "no output for 1s",
            id="no-output-watchdog",
        ),
    ],
)
async def test_a_stuck_run_is_killed_with_its_whole_group(
    tmp_path: Path, monkeypatch, harnesses, role_config: str, turn: dict, expected: str
) -> None:
    configure(monkeypatch, operator_role(role_config))
    turns = [{"match": "OPERATOR-DECISION", "answer": direct(), **turn}]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)

    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    call = only_call(h, "OPERATOR-DECISION")
    assert call["child_pid"], "the fake did not start its helper process"
    await assert_group_gone(call)
    card = await h.board.reads.card("greeting")
    # A failed operator run becomes a question for the owner, as in the reference.
    assert card.phase is Phase.NEEDS_HUMAN
    assert card.failure_stage == "operator"
    assert expected in assert_clean_detail(card.failure_detail)
    [job] = await jobs_of(h, card.id)
    assert job["state"] == "failed" and expected in job["error"]
    [run] = await telemetry.for_card(h.store.reader, card.id)
    assert expected in run.outcome


async def test_a_run_that_exits_normally_counts_and_its_helper_is_killed(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    # The CLI answers and exits 0, but a helper it started (a dev server, a watcher)
    # still runs and still holds the CLI's stdout. The answer must count, at once,
    # and the helper must be killed with the group (runners/process.py promises both).
    configure(monkeypatch, operator_role("timeout_s = 30\nidle_timeout_s = 2\n"))
    needs_human = operator_answer(
        {"decision": "needs_human", "reason": "unclear", "human_action": "Which greeting?"}
    )
    turns = [{"match": "OPERATOR-DECISION", "answer": needs_human, "spawn_child": True}]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)

    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    await assert_group_gone(only_call(h, "OPERATOR-DECISION"))
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.NEEDS_HUMAN
    assert card.failure_detail is None, card.failure_detail
    question = (await h.board.reads.view("greeting")).open_question
    assert question is not None and question.text == "Which greeting?"
    [run] = await telemetry.for_card(h.store.reader, card.id)
    # Counted at the CLI's exit: a run that waited for the helper's pipe to close would
    # have met the idle watchdog (2 s, the helper says nothing) and ended "idle_timeout".
    # How soon after the exit the result is in: bench/watchdogs.py.
    assert run.outcome == "ok" and run.accepted is True


async def test_a_run_whose_helper_left_the_group_still_ends(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    # The helper leaves the process group (setsid) but keeps the CLI's stdout; the CLI
    # ignores SIGTERM, so it is still alive when the SIGKILL comes. The group kill cannot
    # reach the helper, but the run must still end at its timeout instead of waiting
    # for the helper's pipe to close, which holds the job (and its lane slot) forever.
    configure(monkeypatch, operator_role("timeout_s = 1\nidle_timeout_s = 30\n"))
    turn = {"hang": "trickle", "spawn_child": "detached", "ignore_sigterm": True}
    turns = [{"match": "OPERATOR-DECISION", "answer": direct(), **turn}]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)

    await h.board.act("greeting", Action.START, actor=OWNER)
    try:
        await run_idle(h, timeout=8)
    finally:
        kill_strays(h)  # the detached helper: nothing of the bot's can reach it

    call = only_call(h, "OPERATOR-DECISION")
    await assert_group_gone({**call, "child_pid": None})
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.NEEDS_HUMAN
    assert "timed out after 1s" in assert_clean_detail(card.failure_detail)


async def test_output_over_the_cap_fails_cleanly(tmp_path: Path, monkeypatch, harnesses) -> None:
    # The worker has no setting for the cap, so this floods past the real default
    # (64 MiB): one agent-message line that long, then the answer.
    cap = ProcessLimits().output_cap
    turns = [{"match": "OPERATOR-DECISION", "answer": direct(), "huge_output_bytes": cap}]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)

    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    await assert_group_gone(only_call(h, "OPERATOR-DECISION"))
    card = await h.board.reads.card("greeting")
    # The valid decision after the flood is never acted on: a truncated answer is no answer.
    assert card.phase is Phase.NEEDS_HUMAN
    assert card.lane is None
    detail = assert_clean_detail(card.failure_detail)
    assert f"output exceeded the cap of {cap} bytes" in detail
    [job] = await jobs_of(h, card.id)
    assert job["state"] == "failed"


# --- broken answers reject the whole job and leave nothing behind ---------------


async def assert_rejected_cleanly(
    h,
    slug: str,
    *,
    phase: Phase,
    stage: str,
    names: tuple[str, ...],
    slugs_before: list[str],
    files_before: dict[str, bytes],
) -> None:
    card = await h.board.reads.card(slug)
    assert card.phase is phase, (card.phase, card.failure_detail)
    assert card.failure_stage == stage
    detail = assert_clean_detail(card.failure_detail)
    for name in names:
        assert name in detail, (name, detail)
    jobs = await jobs_of(h, card.id)
    assert jobs[-1]["state"] == "failed"
    assert all(name in CONTROL_CHARS.sub(" ", jobs[-1]["error"]) for name in names)
    assert all(job["state"] not in ("queued", "running") for job in jobs)
    # No partial state: no new card, no question of the model's, nothing queued, no file.
    # A failed operator run asks its own question: the failure, for the owner to answer.
    assert await h.board.reads.slugs() == slugs_before
    questions = await h.store.reader.fetchall("SELECT kind, text, state FROM questions")
    if phase is Phase.NEEDS_HUMAN:
        assert [(q[0], q[1], q[2]) for q in questions] == [("operator_failed", detail, "open")]
    else:
        assert questions == []
    assert (await h.store.reader.fetchone("SELECT count(*) FROM card_dependencies"))[0] == 0
    assert tree_snapshot(h.repo) == files_before
    assert git(h.repo, "status", "--porcelain", "--untracked-files=all", "--ignored") == ""


def split_child(slug: str, scope: str, **extra) -> dict:
    return {
        "slug": slug,
        "title": f"Part {slug}",
        "wave": 1,
        "blocked_by": [],
        "recommended_lane": "light",
        "runtime": "codex",
        "model": "gpt-5-codex-mini",
        "reasoning_effort": "medium",
        "write_scope": [scope],
        "acceptance_criteria": ["it works"],
        "intent_markdown": f"# {slug}\n\nDo the {slug} part.\n",
        "escalation": [],
        **extra,
    }


def operator_split(*children: dict) -> str:
    return operator_answer({"decision": "split", "reason": "two parts", "children": list(children)})


@pytest.mark.parametrize(
    ("answer", "names"),
    [
        pytest.param(
            '===OPERATOR-DECISION===\n{"schema_version": 1, "decision": \n'
            "===END-OPERATOR-DECISION===",
            ("===OPERATOR-DECISION===", "invalid JSON"),
            id="not-json",
        ),
        pytest.param(
            # The first child is valid; an unknown key (with an escape sequence in
            # its name) in the second rejects the whole answer.
            operator_split(
                split_child("part-one", "src/one/"),
                split_child("part-two", "src/two/", **{"colour\x1b[31m": "red"}),
            ),
            ("children[1].colour", "unknown field"),
            id="split-unknown-field",
        ),
        pytest.param(
            operator_split(
                split_child("part-one", "src/shared/"),
                split_child("part-two", "src/shared/x.py"),
            ),
            ("children[1].write_scope", "overlaps"),
            id="split-overlapping-scopes",
        ),
    ],
)
async def test_an_invalid_operator_answer_changes_nothing(
    tmp_path: Path, monkeypatch, harnesses, answer: str, names: tuple[str, ...]
) -> None:
    turns = [{"match": "OPERATOR-DECISION", "answer": answer}]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    slugs, files = await h.board.reads.slugs(), tree_snapshot(h.repo)

    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    await assert_rejected_cleanly(
        h,
        "greeting",
        phase=Phase.NEEDS_HUMAN,
        stage="operator",
        names=names,
        slugs_before=slugs,
        files_before=files,
    )


def planner_split(*children: tuple[str, str]) -> str:
    blocks = "\n".join(
        f"===CHILD===\nslug: {slug}\n---\n{body}\n===END-CHILD===" for slug, body in children
    )
    return f"===SPLIT-REPORT===\nTwo parts.\n{blocks}\n===END-SPLIT-REPORT==="


async def test_a_split_onto_an_existing_file_writes_nothing(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    answer = planner_split(("part-one", "# One\n\nFirst part.\n"), ("part-two", "# Two\n"))
    turns = [{"match": "SPLIT-REPORT", "answer": answer}]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    # Someone's file, not (yet) a card: the split must not overwrite it.
    existing = h.repo / "docs" / "intent" / "part-two.md"
    existing.write_text("# Somebody else's intent\n")
    git(h.repo, "add", "-A")
    git(h.repo, "commit", "-q", "-m", "an intent not imported yet")
    slugs, files = await h.board.reads.slugs(), tree_snapshot(h.repo)

    await h.board.act("greeting", Action.SPLIT, actor=OWNER)
    await run_idle(h)

    await assert_rejected_cleanly(
        h,
        "greeting",
        phase=Phase.FAILED,
        stage="split",
        names=("part-two.md", "exists already"),
        slugs_before=slugs,
        files_before=files,
    )
    assert existing.read_text() == "# Somebody else's intent\n"


async def test_an_operator_split_onto_an_existing_file_writes_nothing(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    answer = operator_split(
        split_child("part-one", "src/one/"), split_child("part-two", "src/two/")
    )
    turns = [{"match": "OPERATOR-DECISION", "answer": answer}]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    existing = h.repo / "docs" / "intent" / "part-two.md"
    existing.write_text("# Somebody else's intent\n")
    git(h.repo, "add", "-A")
    git(h.repo, "commit", "-q", "-m", "an intent not imported yet")
    slugs, files = await h.board.reads.slugs(), tree_snapshot(h.repo)

    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    # Nothing written, nothing created (this part holds today)...
    card = await h.board.reads.card("greeting")
    assert await h.board.reads.slugs() == slugs
    assert tree_snapshot(h.repo) == files
    assert card.phase is Phase.NEEDS_HUMAN
    detail = assert_clean_detail(card.failure_detail)
    assert "part-two.md" in detail
    # ...but it must be reported as the operator's rejected answer, not as a crash
    # of the worker (stage "worker", "internal error: FileExistsRefusal: ...").
    assert card.failure_stage == "operator", detail
    assert "internal error" not in detail


async def test_a_review_of_another_commit_is_rejected(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    wrong = "0123456789abcdef0123456789abcdef01234567"
    verdict = review_answer("approve").replace("{{HEAD}}", wrong)
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct()},
        {
            "match": "COMMIT-MESSAGE",
            "answer": builder_answer("Add greet()"),
            "files": {"greet.py": "def greet():\n    return 'hi'\n"},
        },
        {"match": "REVIEW-RESULT", "cli": "claude", "answer": verdict},
    ]
    extra = '\n[deploy]\ncommand = ["/bin/true"]\n'
    h = await start(
        tmp_path, turns, {"greeting": INTENT}, extra_config=extra, monkeypatch=monkeypatch
    )
    harnesses.append(h)
    slugs, files = await h.board.reads.slugs(), tree_snapshot(h.repo)

    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    await assert_rejected_cleanly(
        h,
        "greeting",
        phase=Phase.FAILED,
        stage="review",
        names=("commit_hash", wrong[:12]),
        slugs_before=slugs,
        files_before=files,
    )
    card = await h.board.reads.card("greeting")
    assert card.review_decision is None and card.review_report_path is None
    assert not (h.config.bot.workspaces / "greeting" / "docs" / "review").exists()
    kinds = [job["kind"] for job in await jobs_of(h, card.id)]
    assert kinds == ["operator", "builder", "reviewer"]  # no deploy job


DRAFT_BOTH = (
    "===DRAFT-QUESTION===\nWhich greeting?\noptions: hi | hello\n===END-DRAFT-QUESTION===\n"
    "===DRAFT-INTENT===\nslug: greeting-two\n---\n# Greeting two\n\nSay hello.\n"
    "===END-DRAFT-INTENT==="
)


async def start_broken_draft(tmp_path: Path, monkeypatch, harnesses):
    turns = [{"match": "DRAFT-INTENT", "answer": DRAFT_BOTH}]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)
    return h


async def test_a_draft_with_both_blocks_writes_nothing(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    h = await start_broken_draft(tmp_path, monkeypatch, harnesses)
    slugs, files = await h.board.reads.slugs(), tree_snapshot(h.repo)

    draft = await h.board.start_draft("I want a second greeting", actor=OWNER)
    await run_idle(h)

    card = await h.board.reads.card(draft.slug)
    assert card.phase is Phase.DRAFT_FAILED
    detail = assert_clean_detail(card.failure_detail)
    assert "===DRAFT-QUESTION===" in detail and "both" in detail
    assert card.kind.value == "draft"
    # The conversation is kept for the retry; nothing of the answer is in it.
    assert card.data.conversation == [("owner", "I want a second greeting")]
    assert await h.board.reads.slugs() == sorted([*slugs, draft.slug])
    assert (await h.store.reader.fetchone("SELECT count(*) FROM questions"))[0] == 0
    assert tree_snapshot(h.repo) == files
    [job] = await jobs_of(h, card.id)
    assert job["state"] == "failed" and "both" in job["error"]


async def test_a_rejected_draft_names_the_draft_stage(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    # A draft run that fails to run is stage "draft"; a draft answer that is rejected
    # must not be reported as a failed split.
    h = await start_broken_draft(tmp_path, monkeypatch, harnesses)
    draft = await h.board.start_draft("I want a second greeting", actor=OWNER)
    await run_idle(h)
    card = await h.board.reads.card(draft.slug)
    assert card.phase is Phase.DRAFT_FAILED
    assert card.failure_stage == "draft"


# --- configuration problems ------------------------------------------------------


@pytest.mark.parametrize(
    "binary", ["/nonexistent/tools/codex", "codex-not-installed-anywhere"], ids=["path", "name"]
)
async def test_a_missing_binary_names_itself_and_its_key(
    tmp_path: Path, monkeypatch, harnesses, binary: str
) -> None:
    configure(monkeypatch, {'binary = "{bin}/codex"': f'binary = "{binary}"'})
    turns = [{"match": "OPERATOR-DECISION", "answer": direct()}]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)

    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.NEEDS_HUMAN
    assert card.failure_stage == "operator"
    detail = assert_clean_detail(card.failure_detail)
    assert binary in detail and "runtimes.codex.binary" in detail, detail
    assert h.calls() == []


@pytest.mark.sqlite_only  # reads the database file's raw bytes
async def test_the_openrouter_key_reaches_only_its_child(
    tmp_path: Path, monkeypatch, harnesses, caplog
) -> None:
    key = "sk-or-v1-" + uuid.uuid4().hex + uuid.uuid4().hex
    key_file = tmp_path / "openrouter.key"
    key_file.write_text(key + "\n")
    key_file.chmod(0o600)
    configure(
        monkeypatch,
        {
            **operator_role(
                'runtime = "openrouter"\nmodel = "openai/gpt-5-mini"\ntimeout_s = 30\n'
            ),
            # Prompts and answers are stored too: more places the key must not reach.
            "[bot]\n": "[bot]\nkeep_transcripts = true\n",
        },
    )
    extra = (
        f'\n[runtimes.openrouter]\nbinary = "{BIN}/codex"\n'
        f'api_key_file = "{key_file}"\npass_env = {PASS_ENV}\n'
    )
    turns = [
        {
            "match": "OPERATOR-DECISION",
            "answer": direct(),
            "expect_env": {"OPENROUTER_API_KEY": key},
        },
        {
            "match": "COMMIT-MESSAGE",
            "answer": builder_answer(),
            "files": {"greet.py": "def greet():\n    return 'hi'\n"},
            "forbid_env": ["OPENROUTER_API_KEY"],
        },
        {
            "match": "REVIEW-RESULT",
            "cli": "claude",
            "answer": review_answer(),
            "forbid_env": ["OPENROUTER_API_KEY"],
        },
    ]
    caplog.set_level(logging.DEBUG)
    h = await start(
        tmp_path, turns, {"greeting": INTENT}, extra_config=extra, monkeypatch=monkeypatch
    )
    harnesses.append(h)
    assert key not in os.environ.values()

    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    card = await h.board.reads.card("greeting")
    # Every fake checked its environment (expect_env / forbid_env exit 4 otherwise).
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    calls = h.calls()
    assert len(calls) == 3
    operator, *others = calls
    assert 'model_provider="openrouter"' in operator["argv"]
    assert "OPENROUTER_API_KEY" in operator["env_keys"]
    assert all("OPENROUTER_API_KEY" not in call["env_keys"] for call in others)
    # Never in argv, nor anywhere else the fake logged (stdin, cwd, config).
    assert all(key not in arg for call in calls for arg in call["argv"])
    assert key not in h.log.read_text()
    # Never in the logs, with DEBUG on (which does log the argv).
    assert any("argv" in record.getMessage() for record in caplog.records)
    assert all(key not in record.getMessage() for record in caplog.records)
    assert key not in caplog.text
    # Never in the database: every table, and the raw files (WAL included).
    await h.store.close()
    harnesses.remove(h)
    dump = dump_database(h.config.bot.database)
    assert "OPERATOR-DECISION" in dump  # the transcripts are there...
    assert key not in dump  # ...the key is not
    for path in h.config.bot.database.parent.glob(h.config.bot.database.name + "*"):
        assert key.encode() not in path.read_bytes(), path


# --- cancel ----------------------------------------------------------------------


async def test_cancel_kills_a_hanging_builder_and_resumes_the_card(
    tmp_path: Path, monkeypatch, harnesses
) -> None:
    started = Fifo(tmp_path / "builder-started")
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct()},
        {
            "match": "COMMIT-MESSAGE",
            "answer": builder_answer(),
            "hang": "before_output",
            "spawn_child": True,
            "touch_file": str(started.path),
        },
    ]
    h = await start(tmp_path, turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
    harnesses.append(h)

    await h.board.act("greeting", Action.START, actor=OWNER)
    worker = asyncio.create_task(h.worker.run(until_idle=True))
    try:
        pid = int(await started.line(timeout=20))
        card = await h.board.reads.card("greeting")
        assert card.phase is Phase.BUILDING
        [_, build] = await jobs_of(h, card.id)
        assert build["kind"] == "builder" and build["state"] == "running"

        await h.board.act("greeting", Action.CANCEL, actor=OWNER)
        await asyncio.wait_for(worker, timeout=10)
    finally:
        started.close()
        if not worker.done():
            worker.cancel()

    call = only_call(h, "COMMIT-MESSAGE")
    assert call["pid"] == pid and call["child_pid"]
    await assert_group_gone(call, within=5.0)  # a bound: the worker has ended already
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.PLANNED  # the stable phase before /start
    assert card.failure_stage is None
    [_, build] = await jobs_of(h, card.id)
    assert build["state"] == "cancelled"
    last = (await card_store.events(h.store.reader, card.id))[-1]
    assert (last.from_phase, last.to_phase, last.action) == (
        Phase.BUILDING,
        Phase.PLANNED,
        "cancel",
    )
    # The cancelled run produced no commit on the card's branch.
    assert git(h.repo, "rev-parse", "card/greeting") == git(h.repo, "rev-parse", "main")
    assert json.loads(build["payload"])["phase"] == "building"
