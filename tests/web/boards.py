"""Boards to look at: real cards moved through the board service the way the worker does.

Every card gets where it is by the transitions the bot itself makes (import, owner
actions, a claimed job and the validated result applied), so the web board is
shown exactly the rows the bot writes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from chatbot.board import BoardService, RunRecord
from chatbot.board.files import StagedFiles
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.store import Store
from chatbot.store import cards as card_store

WORKER = "web-test-worker"
OWNER = "owner@localhost"
# Either would set window.pwned if it ever became markup.
HOSTILE_TITLE = '<img src=x onerror="window.pwned=1">'
HOSTILE_SCRIPT = "<script>window.pwned=1</script>"
REVIEW_REPORT = f"""## Findings

- The handler answers **200** with the body from the intent.
- A test covers it: `tests/test_hello.py`.

{HOSTILE_SCRIPT}

| check | result |
|---|---|
| tests | pass |
"""
RESEARCH_REPORT = """# Queues compared

1. **arq**: small, asyncio, Redis.
2. *SQLite*: already here; `FOR UPDATE` is not needed with one writer.
"""


def intent(repo: Path, slug: str, title: str, body: str = "", folder: str = "docs/intent") -> None:
    path = repo / folder / f"{slug}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {title}\n\n{body or 'Do the thing.'}\n", encoding="utf-8")


async def claimed(board: BoardService, slug: str):
    job = (await board.reads.view(slug)).active_job
    assert job is not None, f"{slug} has no job"
    got = await board.queue.claim(job.lane, WORKER, 600)
    assert got is not None and got.id == job.id, f"{slug}: another job was claimed first"
    return got


async def system(board: BoardService, slug: str, action: Action, **changes):
    job = await claimed(board, slug)
    return await board.apply(slug, action, job=job, worker=WORKER, reason=action.value, **changes)


async def ran(board: BoardService, slug: str, role: str, cost: float, tokens: int) -> None:
    card = await board.reads.card(slug)
    await board.queue.record_run(
        RunRecord(
            role=role,
            runtime="codex",
            configured_model="gpt-5-codex-mini",
            actual_model="gpt-5-codex-mini",
            reasoning_effort="medium",
            actual_reasoning_effort="medium",
            input_tokens=tokens,
            cached_tokens=tokens // 4,
            output_tokens=tokens // 10,
            cost_usd=cost,
            duration_s=12.5,
            turns=3,
            outcome="ok",
            session_id=None,
            card_id=card.id,
        )
    )


@dataclass(frozen=True)
class Seeded:
    """Which card sits in which board column (group)."""

    groups: dict[str, str]  # slug -> group


async def seed(board: BoardService, repo: Path, planned: int = 3) -> Seeded:
    """One card or more in every column, each with what its page shows."""
    groups: dict[str, str] = {}
    for number in range(planned):
        intent(repo, f"plain-{number}", f"Plain card {number}")
        groups[f"plain-{number}"] = "planned"
    intent(repo, "hostile", HOSTILE_TITLE, f"An intent with {HOSTILE_SCRIPT} in it.")
    groups["hostile"] = "planned"
    for slug, title in (
        ("reviewed", "Add a /hello endpoint"),
        ("in-review", "Review me"),
        ("building", "Being built"),
        ("asks", "Needs an answer"),
        ("operator", "The operator decides"),
        ("archived", "Old idea"),
    ):
        intent(repo, slug, title, "## Goal\n\nAnswer `GET /hello`.\n\n- one\n- two\n")
    intent(repo, "queues", "Compare queues", "Which queue?", folder="docs/research-intent")
    await board.import_cards()

    # ready: the whole way, with a review report and runs that cost something.
    await board.act("reviewed", Action.START, actor=OWNER)
    await system(
        board,
        "reviewed",
        Action.OPERATOR_DIRECT,
        lane="light",
        runtime="codex",
        model="gpt-5-codex-mini",
    )
    await ran(board, "reviewed", "operator", 0.0125, 12_000)
    await system(board, "reviewed", Action.BUILD_COMMITTED, commit_hash="ab12cd34ef56" * 3)
    await ran(board, "reviewed", "builder", 0.5, 250_000)
    files = StagedFiles(repo)
    files.add("docs/review/reviewed.md", REVIEW_REPORT)
    card = await board.reads.card("reviewed")
    review = {"commit": card.commit_hash, "decision": "approve", "report": REVIEW_REPORT}
    await system(
        board,
        "reviewed",
        Action.REVIEW_APPROVED,
        files=files,
        review_decision="approve",
        review_report_path="docs/review/reviewed.md",
        deployment_status="pending",
        data=card.data.updated(reviews=[review]),
    )
    # Approved, its deployment pending: it waits for the owner's /deploy (the inbox's).
    groups["reviewed"] = "waiting"

    # waiting for you: an open question with options (hostile text in both).
    await board.act("asks", Action.START, actor=OWNER)
    await system(
        board,
        "asks",
        Action.OPERATOR_NEEDS_HUMAN,
        question=(
            "needs_human",
            f"Which database? {HOSTILE_SCRIPT}",
            ["SQLite", f"PostgreSQL {HOSTILE_TITLE}"],
        ),
    )
    groups["asks"] = "waiting"

    # done: a research report written, and an archived card.
    await board.act("queues", Action.RESEARCH, actor=OWNER)
    job = await claimed(board, "queues")
    await board.apply("queues", Action.RESEARCH_STARTED, reason="run started")
    files = StagedFiles(repo)
    files.add("docs/research/queues.md", RESEARCH_REPORT)
    card = await board.reads.card("queues")
    await board.apply(
        "queues",
        Action.RESEARCH_DONE,
        job=job,
        worker=WORKER,
        files=files,
        data=card.data.updated(research_report="docs/research/queues.md"),
    )
    groups["queues"] = "done"
    await board.act("archived", Action.ARCHIVE, actor=OWNER)
    groups["archived"] = "archived"

    # Last, one queued job per lane so that each claim above took its own card's job.
    await board.act("in-review", Action.START, actor=OWNER)
    await system(board, "in-review", Action.OPERATOR_DIRECT, lane="light")
    await system(board, "in-review", Action.BUILD_COMMITTED, commit_hash="9" * 40)
    groups["in-review"] = "review"  # its reviewer job waits in the reviewer lane
    await board.act("building", Action.START, actor=OWNER)
    await system(board, "building", Action.OPERATOR_DIRECT, lane="light")
    await claimed(board, "building")  # the builder runs
    groups["building"] = "working"
    await board.act("operator", Action.START, actor=OWNER)  # queued for the operator
    groups["operator"] = "working"
    return Seeded(groups)


def now() -> float:
    return time.time()


async def many(
    store: Store, phase: Phase, count: int, prefix: str, title: str = "Card {n}"
) -> list[str]:
    """`count` cards straight into `phase` (as the importer writes a card), in order of
    creation, so the last one is the most recently changed; their slugs."""
    slugs = []
    async with store.transaction() as db:
        for n in range(count):
            slug = f"{prefix}-{n:03d}"
            await card_store.create(
                db, slug, Kind.INTENT, phase, actor="test", title=title.format(n=n), lane="light"
            )
            slugs.append(slug)
    return slugs
