"""`chatbot backup` of a big board while the bot answers commands: how long the backup
takes, and the command latency before and during it.

The bot is the whole chat side as `chatbot run` assembles it (store, board, notifier,
outbox, chat intake; in this process) with the console transport, so a command's
time is from the line typed to the bot's answer handed to the transport. The board
is filled by bulk INSERT (--cards cards, their events). The owner sends `/status
card-N` one at a time, a different card each time: first --count commands alone,
then for as long as `chatbot backup` (its own process, as an operator runs it) takes.
Prints numbers; asserts nothing.

    .venv/bin/python bench/backup.py [--cards 100000] [--count 300]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chatbot.app import serve as service  # noqa: E402
from chatbot.app.startup import running_bot  # noqa: E402
from chatbot.chat.intake import ChatIntake  # noqa: E402
from chatbot.config import parse_config  # noqa: E402
from chatbot.store import Store  # noqa: E402
from chatbot.transports.console import ConsoleSettings, ConsoleTransport  # noqa: E402
from tests.pipeline.harness import make_repo  # noqa: E402

CONFIG = """
[bot]
owners = ["owner@localhost"]
database = "board.sqlite3"
repo = "repo"
workspaces = "workspaces"
[console]
owner = "owner@localhost"
[runtimes.codex]
binary = "codex"
[lanes.light]
runtime = "codex"
model = "gpt-5-codex-mini"
iteration_limit = 5
"""
PHASES = ("planned", "building", "reviewing", "ready_for_deployment", "deployed", "failed")


async def fill(store: Store, cards: int) -> None:
    now = time.time()
    card_rows, event_rows = [], []
    for i in range(cards):
        phase = PHASES[i % len(PHASES)]
        card_rows.append(
            (
                i + 1,
                f"card-{i}",
                f"Card {i}: make the widget {i} configurable",
                phase,
                f"docs/intent/card-{i}.md",
                now - 86400 + i,
                now,
            )
        )
        event_rows.append((i + 1, 1, None, "planned", "import", "system", now))
        event_rows.append((i + 1, 2, "planned", phase, "bench", "system", now))
    async with store.transaction() as db:
        await db.executemany(
            "INSERT INTO cards (id, slug, title, kind, phase, version, lane, source_path, "
            "created_at, updated_at) VALUES (?, ?, ?, 'intent', ?, 1, 'light', ?, ?, ?)",
            card_rows,
        )
        await db.executemany(
            "INSERT INTO events (card_id, seq, from_phase, to_phase, action, actor, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            event_rows,
        )


def unthrottled() -> mock._patch:
    """The owner's token bucket would refuse hundreds of commands in a row."""
    original = ChatIntake.from_config.__func__  # type: ignore[attr-defined]

    def from_config(cls: type, board: object, config: object, **options: object) -> ChatIntake:
        return original(cls, board, config, **{"rate_capacity": 1_000_000, **options})

    return mock.patch.object(ChatIntake, "from_config", classmethod(from_config))


async def command(console: ConsoleTransport, cards: int) -> float:
    slug = f"card-{random.randrange(cards)}"
    t0 = time.perf_counter()
    await console.push(f"/status {slug}")
    while True:
        said = await console.pop(within=30)
        if slug in said.text:
            return time.perf_counter() - t0


def line(label: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"  {label:<22} n={len(samples):<5} median {statistics.median(samples) * 1000:7.1f} ms"
        f"   p99 {p99 * 1000:7.1f} ms   max {ordered[-1] * 1000:7.1f} ms"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--count", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-backup-") as folder:
        root = Path(folder)
        make_repo(root, {})
        path = root / "bot.toml"
        path.write_text(CONFIG)
        config = parse_config(CONFIG, path)
        async with contextlib.AsyncExitStack() as stack:
            stack.enter_context(unthrottled())
            bot = await stack.enter_async_context(running_bot(config, worker=False))
            t0 = time.perf_counter()
            await fill(bot.store, args.cards)
            print(f"board: {args.cards} cards filled in {time.perf_counter() - t0:.1f}s")
            console = ConsoleTransport(ConsoleSettings(owner="owner@localhost"))
            stop = asyncio.Event()
            serving = asyncio.create_task(service.serve(bot, stop, transports={"console": console}))
            await console.wait_online()
            before = [await command(console, args.cards) for _ in range(args.count)]

            during: list[float] = []
            t0 = time.perf_counter()
            backup = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "chatbot",
                "backup",
                str(root / "backup"),
                "--config",
                str(path),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            waited = asyncio.ensure_future(backup.communicate())
            while not waited.done():
                during.append(await command(console, args.cards))
            took = time.perf_counter() - t0
            out, _ = waited.result()
            stop.set()
            await serving
        size = (root / "board.sqlite3").stat().st_size
        print(out.decode().strip())
        print(
            f"backup of {args.cards} cards ({size / 1e6:.1f} MB database): {took:.2f}s "
            "from start to exit of `chatbot backup` (its interpreter's start included)"
        )
        print("/status <slug> latency, typed to answered:")
        print(line("before the backup", before))
        print(line("during the backup", during))


if __name__ == "__main__":
    asyncio.run(main())
