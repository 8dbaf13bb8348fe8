"""What the notifier posts for board changes: every configured room, in the change's transaction."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chatbot.board import BoardService
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.notify.format import MAX_POST_CHARS, cut
from chatbot.notify.notifier import Destination, Notifier
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store.jobs import claim
from runners.runtimes import Limited
from tests.records import run_record

ROOMS = [
    Destination("xmpp", "ops@muc", owners=("owner@example.org",)),
    Destination("matrix", "!room", owners=("@owner:example.org", "@second:example.org")),
]


@pytest.fixture
async def board(tmp_path: Path):
    store = await Store.open(tmp_path / "b.sqlite3")
    service = BoardService(store, tmp_path)
    service.listeners.append(Notifier(store, ROOMS, "en"))
    yield service
    await store.close()


async def posts(board: BoardService) -> list[chat_store.OutboxRow]:
    rows = []
    for transport in ("xmpp", "matrix"):
        rows += await chat_store.pending(board.store.reader, transport)
    return rows


async def running_review(board: BoardService) -> object:
    async with board.store.transaction() as db:
        await card_store.create(
            db, "c", Kind.INTENT, Phase.REVIEWING, actor="t", commit_hash="a" * 40
        )
        await db.execute(
            "INSERT INTO jobs (card_id, kind, lane, created_at) VALUES (1, 'reviewer', 'r', 0)"
        )
        return await claim(db, "r", "w", 60)


async def test_a_review_goes_to_every_room_decision_first_and_cut_with_the_path(board) -> None:
    job = await running_review(board)
    report = "# Review\n\n" + "word " * 2000
    await board.apply(
        "c",
        Action.REVIEW_REJECTED,
        job=job,
        worker="w",
        details={"decision": "reject", "report": report, "path": "docs/review/c.md"},
        review_decision="reject",
    )
    rows = await posts(board)
    assert [(r.transport, r.room) for r in rows] == [("xmpp", "ops@muc"), ("matrix", "!room")]
    text = rows[0].text
    assert text.startswith("🔎 c: review reject for aaaaaaaaaaaa.")
    assert len(text) <= MAX_POST_CHARS and "docs/review/c.md" in text
    assert "/fix c" in text
    # Matrix gets the report's markdown rendered; XMPP plain text.
    assert rows[0].html is None and rows[1].html.startswith("<p>🔎 c: review reject")
    assert "<h1>Review</h1>" in rows[1].html


async def test_a_question_is_posted_with_numbered_options_and_linked(board) -> None:
    async with board.store.transaction() as db:
        await card_store.create(db, "c", Kind.INTENT, Phase.OPERATOR_RUNNING, actor="t")
    await board.apply(
        "c",
        Action.OPERATOR_NEEDS_HUMAN,
        reason="unclear",
        question=("needs_human", "Which storage?", ["S3", "local disk"]),
    )
    rows = [r for r in await posts(board) if r.purpose == "question"]
    assert len(rows) == 2 and rows[0].question_id is not None
    assert "1️⃣ S3\n2️⃣ local disk" in rows[0].text
    assert "/answer c" in rows[0].text
    # The question alone mentions the owners, each room its own transport's ids.
    assert [r.mentions for r in rows] == [
        ("owner@example.org",),
        ("@owner:example.org", "@second:example.org"),
    ]
    others = [r for r in await posts(board) if r.purpose != "question"]
    assert others and all(r.mentions == () for r in others)


async def test_a_rolled_back_change_posts_nothing(board) -> None:
    async with board.store.transaction() as db:
        await card_store.create(db, "c", Kind.INTENT, Phase.PLANNED, actor="t")
    with pytest.raises(Exception):  # noqa: B017 - any refusal; the point is what is left
        await board.apply("c", Action.REVIEW_APPROVED)
    assert await posts(board) == []


async def test_german_texts(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "b.sqlite3")
    try:
        board = BoardService(store, tmp_path)
        board.listeners.append(Notifier(store, ROOMS[:1], "de"))
        async with store.transaction() as db:
            await card_store.create(db, "c", Kind.INTENT, Phase.SPLIT, actor="t")
            await card_store.create(
                db, "k", Kind.INTENT, Phase.REVIEWING, actor="t", parent_id=1, commit_hash="b" * 40
            )
        await board.apply(
            "k", Action.REVIEW_APPROVED, details={"decision": "approve", "report": "ok"}
        )
        texts = [r.text for r in await chat_store.pending(store.reader, "xmpp")]
        assert any("Bereit für das Deployment" in t for t in texts)
        assert any("Alle Kinder sind fertig" in t for t in texts)
    finally:
        await store.close()


def test_cut_never_splits_inside_a_word_or_character() -> None:
    text = "Grüße 👍🏽 " * 50
    short = cut(text, 103, " …")
    assert len(short) <= 103 and short.endswith(" …")
    assert short[:-2].rstrip().endswith(("Grüße", "👍🏽"))
    assert cut("short", 100) == "short"


async def test_a_failed_operator_run_is_posted_as_a_question_to_answer_or_retry(board) -> None:
    async with board.store.transaction() as db:
        await card_store.create(db, "c", Kind.INTENT, Phase.OPERATOR_RUNNING, actor="t")
        await db.execute(
            "INSERT INTO jobs (card_id, kind, lane, created_at) VALUES (1, 'operator', 'r', 0)"
        )
        job = await claim(db, "r", "w", 60)
    await board.failures.fail(job, "w", detail="the operator's answer was rejected: bad JSON")
    [row] = [r for r in await posts(board) if r.transport == "xmpp"]
    assert row.purpose == "question" and row.question_id is not None
    assert row.text.startswith("⚠️ c: the operator run failed: the operator's answer was rejected")
    assert "/retry c" in row.text and "/answer c" in row.text


async def test_run_endings_say_the_failure_once(board) -> None:
    async with board.store.transaction() as db:
        card = await card_store.create(db, "c", Kind.INTENT, Phase.BUILDING, actor="t")
    notifier = board.listeners[0]
    record = run_record(
        input_tokens=None,
        cached_tokens=None,
        output_tokens=None,
        duration_s=40.02,
        turns=None,
        outcome="codex: timed out after 40s",
    )
    await notifier.run_finished(card, record)
    [row] = [r for r in await posts(board) if r.transport == "xmpp"]
    assert row.text == (
        "⏹ c: builder run failed after 40s: codex: timed out after 40s (tokens unknown)."
    )


async def test_a_runs_final_text_keeps_who_steered_it_though_the_edit_that_said_so_was_superseded(
    board,
) -> None:
    """Pending edits of one message are superseded by the next: the steer's lines must
    reach the room on the run's last edit, not only on an edit that may never go out."""
    async with board.store.transaction() as db:
        card = await card_store.create(db, "c", Kind.INTENT, Phase.BUILDING, actor="t")
    notifier = board.listeners[0]
    await notifier.run_started(card, "builder", "codex", "m", 7)
    who = "xmpp:owner@example.org"
    await notifier.run_note(card, 7, "talk_steered", {"who": who, "text": "Use tabs."})
    await notifier.run_note(card, 7, "talk_steer_taken", {"who": who})
    record = run_record(
        input_tokens=3,
        cached_tokens=None,
        output_tokens=4,
        duration_s=12.0,
        turns=None,
        job_id=7,
    )
    await notifier.run_finished(card, record)
    rows = [r for r in await posts(board) if r.transport == "xmpp"]
    # The run's first post and one pending edit: the notes' own edits were superseded.
    first, last = rows
    assert last.replaces_id == first.id
    assert last.text.splitlines()[1:] == [
        f"↪️ steered by {who}: Use tabs.",
        f"✔️ the agent took {who}'s steer",
    ]
    assert last.text.startswith("⏹ c: builder run ok after 12s")


async def test_a_fixer_commit_is_announced_as_the_fixers(board) -> None:
    async with board.store.transaction() as db:
        await card_store.create(db, "c", Kind.INTENT, Phase.FIXER_RUNNING, actor="t")
    await board.apply(
        "c", Action.FIXER_COMMITTED, reason="Fix it", commit_hash="f" * 40, details={}
    )
    [row] = [r for r in await posts(board) if r.transport == "xmpp"]
    assert row.text == "🔧 c: fixer committed ffffffffffff: Fix it"


def test_the_notice_catalogues_have_the_same_keys_and_fields() -> None:
    import string

    from chatbot.notify.texts import TEXTS

    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    assert set(TEXTS["en"]) == set(TEXTS["de"])
    for key, text in TEXTS["en"].items():
        assert fields(text) == fields(TEXTS["de"][key]), key


async def test_a_quota_outage_is_told_once_and_ends_only_with_a_run_started_after_it(
    board,
) -> None:
    """A run already under way when the limit came (another card's operator, say) may end
    well on what it had; only a run that started after the notice proves the outage over."""
    async with board.store.transaction() as db:
        alpha = await card_store.create(db, "alpha", Kind.INTENT, Phase.BUILDING, actor="t")
        beta = await card_store.create(db, "beta", Kind.INTENT, Phase.BUILDING, actor="t")
    notifier = board.listeners[0]
    limit = Limited("quota or rate limit: 429")

    async def notices() -> int:
        return len(
            [r for r in await posts(board) if r.transport == "xmpp" and r.purpose == "quota"]
        )

    before = time.time() - 5
    await notifier.run_limited(alpha, "codex", limit, False, time.time() + 60)
    assert await notices() == 1
    notifier.quota.finished(run_record(role="operator", created_at=before))
    await notifier.run_limited(beta, "codex", limit, False, time.time() + 60)
    assert await notices() == 1  # the same outage: quiet
    notifier.quota.finished(run_record(outcome="codex: quota or rate limit: 429"))
    await notifier.run_limited(beta, "claude", limit, False, time.time() + 60)
    assert await notices() == 2  # another runtime's outage is its own
    notifier.quota.finished(run_record(created_at=time.time()))
    await notifier.run_limited(alpha, "codex", limit, False, time.time() + 60)
    assert await notices() == 3  # a run started after the notice ended well: a new outage


async def test_a_run_without_a_configured_model_says_so_in_words(board) -> None:
    # Issue 34: "(codex default)" read as a model called "default".
    async with board.store.transaction() as db:
        card = await card_store.create(db, "c", Kind.INTENT, Phase.OPERATOR_RUNNING, actor="t")
    await board.listeners[0].run_started(card, "operator", "codex", "", 3)
    await board.apply("c", Action.OPERATOR_DIRECT, reason="small", lane="light", runtime="codex")
    started, chose = [r.text for r in await posts(board) if r.transport == "xmpp"]
    assert started == "▶️ c: operator run started (codex with its default model)."
    assert chose.startswith("🧭 c: operator chose the light lane (codex with its default model).")
