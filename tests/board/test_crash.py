"""A process killed with SIGKILL in the middle of a transition leaves the database consistent."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from chatbot.domain.phases import Kind, Phase
from chatbot.store import Store
from chatbot.store import cards as card_store

WORKER = Path(__file__).parent / "procs" / "transition_worker.py"
ROOT = Path(__file__).resolve().parents[2]


async def _spawn(mode: str, db: Path, slug: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        mode,
        str(db),
        slug,
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )


async def _consistent(path: Path) -> None:
    store = await Store.open(path)
    try:
        rows = await store.reader.fetchall("PRAGMA integrity_check")
        assert rows[0][0] == "ok"
        for card in await card_store.all_cards(store.reader):
            history = await card_store.events(store.reader, card.id)
            assert card.version == len(history)
            assert [e.seq for e in history] == list(range(1, len(history) + 1))
            assert history[-1].to_phase is card.phase
            for previous, current in zip(history, history[1:], strict=False):
                assert current.from_phase is previous.to_phase
    finally:
        await store.close()


async def test_kill_between_write_and_commit_leaves_nothing_half_done(tmp_path: Path) -> None:
    path = tmp_path / "board.sqlite3"
    async with await Store.open(path) as store, store.transaction() as db:
        await card_store.create(db, "c", Kind.INTENT, Phase.PLANNED, actor="t")
    process = await _spawn("hold", path, "c")
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), 20)
    assert line.strip() == b"MID"  # the card row is updated, the event and job written
    process.send_signal(signal.SIGKILL)
    await process.wait()
    await _consistent(path)
    async with await Store.open(path) as store:
        card = await card_store.require(store.reader, "c")
        assert card.phase is Phase.PLANNED and card.version == 1
        jobs = await store.reader.fetchall("SELECT count(*) FROM jobs")
        assert jobs[0][0] == 0


async def test_kill_during_a_stream_of_transitions_keeps_every_commit(tmp_path: Path) -> None:
    path = tmp_path / "board.sqlite3"
    async with await Store.open(path) as store, store.transaction() as db:
        await card_store.create(db, "c", Kind.INTENT, Phase.PLANNED, actor="t")
    process = await _spawn("loop", path, "c")
    assert process.stdout is not None
    committed = 0
    while committed < 200:
        line = await asyncio.wait_for(process.stdout.readline(), 20)
        committed = int(line.split()[1])
    process.send_signal(signal.SIGKILL)
    await process.wait()
    await _consistent(path)
    async with await Store.open(path) as store:
        card = await card_store.require(store.reader, "c")
        # Every commit the process reported is there; at most the one in flight is not.
        assert card.version - 1 >= committed
