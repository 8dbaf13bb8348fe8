"""/metrics on a big board: how long a scrape takes, and what it says.

Builds a board of --cards cards on SQLite (every card with a sent post in the outbox,
as on a board that has run for a while; --queued of them with a queued job across three
lanes and roles, a few running, --pending posts waiting, some given up, open questions,
workers on three hosts), serves /metrics on 127.0.0.1 with the bot's own listener and
scrapes it over HTTP --scrapes times: the median and worst time, the body's size, and an
excerpt of the exposition.

    .venv/bin/python bench/metrics.py [--cards 100000] [--queued 1000] [--scrapes 20]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chatbot.board import BoardService  # noqa: E402
from chatbot.store import Store  # noqa: E402
from chatbot.store import workers as worker_store  # noqa: E402
from chatbot.web.metrics import Metrics  # noqa: E402
from chatbot.web.metrics_http import MetricsDoor, MetricsListener  # noqa: E402

LANES = ("light", "heavy", "research")
ROLES = ("operator", "builder", "reviewer")


async def build(store: Store, cards: int, queued: int, pending: int) -> None:
    now = time.time()
    async with store.transaction() as db:
        for start in range(0, cards, 5000):
            rows = [
                (f"card-{i}", "intent", "done", now - 86400, now - 86400)
                for i in range(start, min(cards, start + 5000))
            ]
            await db.executemany(
                "INSERT INTO cards (slug, kind, phase, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            await db.executemany(
                "INSERT INTO outbox (transport, room, text, state, txn_id, created_at, sent_at) "
                "VALUES ('xmpp', 'board@muc', 'done', 'sent', ?, ?, ?)",
                [(f"t-{slug}", now - 86400, now - 86400) for slug, *_ in rows],
            )
        jobs = [
            (i + 1, ROLES[i % 3], LANES[i % 3], "running" if i < 3 else "queued", now - 60 * i)
            for i in range(queued)
        ]
        await db.executemany(
            "INSERT INTO jobs (card_id, kind, lane, state, created_at) VALUES (?, ?, ?, ?, ?)",
            jobs,
        )
        await db.executemany(
            "INSERT INTO outbox (transport, room, text, state, txn_id, created_at) "
            "VALUES (?, 'board@muc', 'waiting', ?, ?, ?)",
            [
                (
                    "xmpp" if i % 2 else "matrix",
                    "failed" if i % 10 == 0 else "pending",
                    f"p-{i}",
                    now - i,
                )
                for i in range(pending)
            ],
        )
        await db.executemany(
            "INSERT INTO questions (card_id, kind, text, created_at) "
            "VALUES (?, 'operator', 'Which way?', ?)",
            [(queued + i + 1, now - 3600 * i) for i in range(20)],
        )
        for n, host in enumerate(("build-1", "build-2", "build-3")):
            await worker_store.beat(
                db, f"w-{n}", host=host, process=None, lanes=list(LANES), lease_s=60
            )


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(Path(folder) / "board.sqlite3")
        try:
            started = time.perf_counter()
            await build(store, args.cards, args.queued, args.pending)
            print(f"built {args.cards} cards in {time.perf_counter() - started:.1f} s")
            token = secrets.token_urlsafe(24)
            up = {"xmpp": True, "matrix": True}
            metrics = Metrics(BoardService(store, Path(folder)).reads, lambda: up)
            listener = MetricsListener(MetricsDoor(metrics, (token,)), "127.0.0.1", 0)
            assert await listener.start()
            times = []
            headers = {"Authorization": f"Bearer {token}"}
            try:
                async with aiohttp.ClientSession() as session:
                    for _ in range(args.scrapes):
                        begun = time.perf_counter()
                        async with session.get(listener.url, headers=headers) as response:
                            body = await response.text()
                        times.append(time.perf_counter() - begun)
            finally:
                await listener.stop()
        finally:
            await store.close()
    print(
        f"/metrics on {args.cards} cards, {args.queued} jobs, {args.pending} outbox rows "
        f"waiting: median {statistics.median(times) * 1000:.1f} ms, "
        f"worst {max(times) * 1000:.1f} ms over {args.scrapes} scrapes; {len(body)} bytes"
    )
    shown = [line for line in body.splitlines() if not line.startswith("#")]
    print("\n".join(line for line in shown if "_bucket" not in line)[:3000])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--queued", type=int, default=1000)
    parser.add_argument("--pending", type=int, default=500)
    parser.add_argument("--scrapes", type=int, default=20)
    asyncio.run(main(parser.parse_args()))
