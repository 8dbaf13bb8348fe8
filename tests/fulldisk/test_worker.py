"""A run that ends while the database's disk is full: its result waits, is applied
exactly once when space is back, and the worker neither crashes nor fails the card."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store.health import StoreHealth
from tests.conftest import Database
from tests.fulldisk.disk import empty_wal, small_disk
from tests.pipeline import harness
from tests.pipeline.harness import builder_answer, direct, review_answer, start
from tests.pipeline.support import Fifo

OWNER = "xmpp:owner@example.org"
INTENT = "# Greeting\n\nSay hello.\n"


async def test_a_result_that_meets_a_full_disk_is_applied_once_space_is_back(
    tmp_path: Path, monkeypatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    started = Fifo(tmp_path / "operator-started")
    go = tmp_path / "operator-may-answer"
    turns = [
        {
            "match": "OPERATOR-DECISION",
            "answer": direct(),
            "touch_file": str(started.path),
            "wait_for_file": str(go),
        },
        {
            "match": "COMMIT-MESSAGE",
            "answer": builder_answer(),
            "files": {"greet.py": "def greet():\n    return 'hi'\n"},
        },
        {"match": "REVIEW-RESULT", "answer": review_answer()},
    ]
    with small_disk(tmp_path) as disk:
        monkeypatch.setattr(harness, "DATABASE", Database(disk.path / "board.sqlite3"))
        (tmp_path / "h").mkdir()
        h = await start(tmp_path / "h", turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
        h.store.health.probe_first_s = 0.05
        refused = asyncio.Event()

        def heard(health: StoreHealth) -> None:
            if health.problem is not None:
                refused.set()

        h.store.health.listeners.append(heard)
        worker = asyncio.create_task(h.worker.run(until_idle=True))
        try:
            await h.board.act("greeting", Action.START, actor=OWNER)
            await started.line(timeout=20)
            await asyncio.to_thread(empty_wal, disk.path / "board.sqlite3")
            disk.fill()
            go.touch()
            # The operator's answer comes now, and cannot be saved.
            await asyncio.wait_for(refused.wait(), 20)
            assert (await h.board.reads.card("greeting")).phase is Phase.OPERATOR_RUNNING
            disk.free()
            await asyncio.wait_for(worker, 60)
        finally:
            started.close()
            disk.free()
            if not worker.done():
                worker.cancel()
            card = await h.board.reads.card("greeting")
            runs = await h.store.reader.fetchall("SELECT role FROM telemetry ORDER BY id")
            await h.store.close()
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    assert [r[0] for r in runs] == ["operator", "builder", "reviewer"]
    assert h.worker.failed_jobs == 0
    assert sum(1 for c in h.calls() if "OPERATOR-DECISION" in c.get("stdin", "")) == 1
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert not tracebacks, [r.getMessage() for r in tracebacks]


async def test_a_worker_that_starts_on_a_full_disk_waits_for_space_then_works(
    tmp_path: Path, monkeypatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A CI run under load: the console answered, the test filled the disk, and only then
    # did the bot's worker register; the refused registration ended the whole bot.
    caplog.set_level(logging.INFO)
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct()},
        {
            "match": "COMMIT-MESSAGE",
            "answer": builder_answer(),
            "files": {"greet.py": "def greet():\n    return 'hi'\n"},
        },
        {"match": "REVIEW-RESULT", "answer": review_answer()},
    ]
    with small_disk(tmp_path) as disk:
        monkeypatch.setattr(harness, "DATABASE", Database(disk.path / "board.sqlite3"))
        (tmp_path / "h").mkdir()
        h = await start(tmp_path / "h", turns, {"greeting": INTENT}, monkeypatch=monkeypatch)
        h.store.health.probe_first_s = 0.05
        refused = asyncio.Event()

        def heard(health: StoreHealth) -> None:
            if health.problem is not None:
                refused.set()

        h.store.health.listeners.append(heard)
        await h.board.act("greeting", Action.START, actor=OWNER)
        await asyncio.to_thread(empty_wal, disk.path / "board.sqlite3")
        disk.fill()
        worker = asyncio.create_task(h.worker.run(until_idle=True))
        try:
            await asyncio.wait_for(refused.wait(), 20)
            assert await h.store.reader.fetchall("SELECT id FROM workers") == []
            disk.free()
            await asyncio.wait_for(worker, 60)
        finally:
            disk.free()
            if not worker.done():
                worker.cancel()
            card = await h.board.reads.card("greeting")
            await h.store.close()
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    assert "worker: waiting to start while" in caplog.text
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert not tracebacks, [r.getMessage() for r in tracebacks]
