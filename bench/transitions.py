"""Transitions per second: the SQLite store vs the reference's whole-state JSON file.

The reference keeps the board as one JSON document and rewrites it under an
exclusive file lock on every change (read, parse, modify, serialise, write a temp
file, fsync, rename). We do the same card moves through `chatbot.store` (one
transaction: check the table, update the card, append its event) and print both
rates and their ratio, measured in one run on a board of --cards cards.

    .venv/bin/python bench/transitions.py [--cards 10000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import tempfile
import time
from pathlib import Path

from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action, By, resolve
from chatbot.store import Store
from chatbot.store import cards as card_store


def _reference_card(slug: str) -> dict:
    # Roughly the fields the reference keeps per card in its state file, written with
    # indent=2 like the reference's other JSON files.
    return {
        "slug": slug,
        "phase": "geplant",
        "title": f"Card {slug}",
        "lane": "leicht",
        "runtime": "codex",
        "model": "gpt-5-codex-mini",
        "reasoning_effort": "medium",
        "depends_on": [],
        "child_slugs": [],
        "parent_id": None,
        "commit_hash": None,
        "review_decision": None,
        "review_report": None,
        "deployment_status": None,
        "failure_stage": None,
        "failure_detail": None,
        "pipeline_run_id": None,
        "auto_retry_attempts": 0,
        "history": [{"phase": "geplant", "at": "2026-11-30T00:00:00+00:00", "job_id": "import"}],
    }


def _json_transition(state_path: Path, lock_path: Path, slug: str) -> None:
    with open(lock_path, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = json.loads(state_path.read_text(encoding="utf-8"))
        card = state["cards"][slug]
        phase = Phase.PLANNED if card["phase"] == "operator_laeuft" else Phase.OPERATOR_RUNNING
        card["phase"] = "operator_laeuft" if phase is Phase.OPERATOR_RUNNING else "geplant"
        card["history"].append({"phase": card["phase"], "at": time.time(), "job_id": "bench"})
        temp = state_path.with_suffix(".tmp")
        with open(temp, "w", encoding="utf-8") as handle:
            json.dump(state, handle, ensure_ascii=False, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, state_path)
        fcntl.flock(lock, fcntl.LOCK_UN)


def bench_json(folder: Path, cards: int, seconds: float) -> tuple[int, float, int]:
    state_path = folder / "state.json"
    lock_path = folder / "state.lock"
    state = {"cards": {f"card-{i}": _reference_card(f"card-{i}") for i in range(cards)}}
    state_path.write_text(json.dumps(state, ensure_ascii=False, indent=2), encoding="utf-8")
    size = state_path.stat().st_size
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        _json_transition(state_path, lock_path, f"card-{done % cards}")
        done += 1
    return done, time.perf_counter() - start, size


async def bench_store(folder: Path, cards: int, seconds: float) -> tuple[int, float, int]:
    path = folder / "board.sqlite3"
    store = await Store.open(path)
    try:
        now = time.time()
        async with store.transaction() as db:
            await db.executemany(
                "INSERT INTO cards (slug, kind, title, phase, version, created_at, updated_at) "
                "VALUES (?, 'intent', ?, 'planned', 1, ?, ?)",
                [(f"card-{i}", f"Card {i}", now, now) for i in range(cards)],
            )
            await db.execute(
                "INSERT INTO events (card_id, seq, from_phase, to_phase, action, actor, at) "
                "SELECT id, 1, NULL, 'planned', 'import', 'system', ? FROM cards",
                (now,),
            )
        resolve("card-0", Action.START, Phase.PLANNED, Kind.INTENT, by=By.OWNER)  # warm up
        done = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            slug = f"card-{done % cards}"
            async with store.transaction() as db:
                card = await card_store.require(db, slug)
                action = Action.START if card.phase is Phase.PLANNED else Action.CANCEL
                await card_store.transition(db, slug, action, actor="bench", by=By.OWNER)
            done += 1
        elapsed = time.perf_counter() - start
    finally:
        await store.close()
    return done, elapsed, path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-transitions-") as tmp:
        folder = Path(tmp)
        store_n, store_s, db_size = asyncio.run(bench_store(folder, args.cards, args.seconds))
        json_n, json_s, json_size = bench_json(folder, args.cards, args.seconds)
    store_rate = store_n / store_s
    json_rate = json_n / json_s
    print(f"board of {args.cards} cards, {args.seconds:.0f} s per method")
    print(
        f"sqlite store:       {store_rate:10.1f} transitions/s "
        f"({store_n} in {store_s:.2f} s; {1000 / store_rate:.3f} ms each; "
        f"db {db_size / 1e6:.1f} MB)"
    )
    print(
        f"json file + flock:  {json_rate:10.1f} transitions/s "
        f"({json_n} in {json_s:.2f} s; {1000 / json_rate:.1f} ms each; "
        f"file {json_size / 1e6:.1f} MB)"
    )
    print(f"ratio:              {store_rate / json_rate:10.1f}x  (target: at least 100x)")


if __name__ == "__main__":
    main()
