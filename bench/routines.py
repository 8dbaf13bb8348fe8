"""The routines' clock with 10,000 routines: what it costs, and how late it fires.

Builds a board with --routines weekly routines spread over the week (none due during
the run) plus --due one-time routines whose moments are spread over the next
--seconds, each starting its own planned card (`/start`, the real handler), and runs
the real clock (chat/routine_clock.py) on the real time for that long. Prints:

- CPU per minute: the process's CPU time while the clock ran, per minute of it (the
  one-time routines' firing included: each moves a card and queues its job);
- idle CPU per minute: the same with nothing due (the 10,000 weekly routines only);
- time to fire after its moment: when a run's command had answered, minus its due time
  (p50/p99/max);
- a burst: --burst routines due at the same moment, the time until the last fired.

    .venv/bin/python bench/routines.py [--routines 10000] [--due 200] [--seconds 30]
        [--burst 1000] [--engine sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chatbot.board import BoardService  # noqa: E402
from chatbot.board.routines import new_routine  # noqa: E402
from chatbot.chat.intake import ChatIntake  # noqa: E402
from chatbot.chat.routine_clock import RoutineClock  # noqa: E402
from chatbot.domain.phases import Kind, Phase  # noqa: E402
from chatbot.domain.schedules import Schedule, parse  # noqa: E402
from chatbot.store import Store  # noqa: E402
from chatbot.store import cards as card_store  # noqa: E402
from chatbot.store import routines as routine_store  # noqa: E402
from tests.realservers.postgres import Postgres  # noqa: E402

ROOM = {"transport": "xmpp", "target": "ops@muc", "target_kind": "room"}
OWNER = "owner@example.org"
ZONE = "Europe/Berlin"
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def build(board: BoardService, store: Store, weekly: int, now: float) -> None:
    """`weekly` routines at every minute of the week but the next hour's."""
    rows = []
    rng = random.Random(37)
    for _ in range(weekly):
        day, hour, minute = rng.choice(DAYS), rng.randrange(24), rng.randrange(60)
        schedule = parse(f"{day} {hour:02d}:{minute:02d}", ZONE, now, once=False)
        row = new_routine(schedule, "/start nothing", f"xmpp:{OWNER}", ROOM, now)
        if row.next_at is not None and row.next_at < now + 3600:
            row = new_routine(schedule, "/start nothing", f"xmpp:{OWNER}", ROOM, now + 3600)
        rows.append(row)
    async with store.transaction() as db:
        for row in rows:
            await routine_store.add(db, row)


async def one_time(board: BoardService, store: Store, count: int, start: float, span: float):
    async with store.transaction() as db:
        for n in range(count):
            slug = f"card-{start:.0f}-{n}"
            await card_store.create(db, slug, Kind.INTENT, Phase.PLANNED, actor="b", title=slug)
            at = start + span * (n + 0.5) / count
            schedule = Schedule("bench", ZONE, at=at)
            await routine_store.add(
                db, new_routine(schedule, f"/start {slug}", f"xmpp:{OWNER}", ROOM, start - 1)
            )


async def run_clock(chat: ChatIntake, seconds: float) -> float:
    """Run the real clock for `seconds`; the CPU seconds it took."""
    stop = asyncio.Event()
    clock = RoutineClock(chat)
    cpu = time.process_time()
    task = asyncio.ensure_future(clock.run(stop))
    await asyncio.sleep(seconds)
    stop.set()
    await task
    return time.process_time() - cpu


async def lateness(store: Store, since: float) -> list[float]:
    rows = await store.reader.fetchall(
        "SELECT finished_at - due_at FROM routine_runs "
        "WHERE due_at >= ? AND finished_at IS NOT NULL",
        (since,),
    )
    return [row[0] for row in rows]


async def measure(store: Store, repo: Path, args: argparse.Namespace) -> None:
    board = BoardService(store, repo)
    chat = ChatIntake(board, owners=[OWNER])
    now = time.time()
    began = time.perf_counter()
    await build(board, store, args.routines, now)
    took = time.perf_counter() - began
    print(f"{args.routines} weekly routines built in {took:.1f} s ({store.engine})")

    idle_s = min(args.seconds, 20.0)
    idle_cpu = await run_clock(chat, idle_s)
    print(f"idle: CPU {idle_cpu * 60 / idle_s * 1000:.1f} ms per minute (nothing due)")

    start = time.time() + 2.0
    await one_time(board, store, args.due, start, args.seconds - 4.0)
    cpu = await run_clock(chat, args.seconds)
    late = await lateness(store, start - 1)
    assert len(late) == args.due, (len(late), args.due)
    print(
        f"{args.due} routines due over {args.seconds - 4:.0f} s among {args.routines}: "
        f"CPU {cpu * 60 / args.seconds * 1000:.0f} ms per minute; "
        f"time to fire after its moment p50 {statistics.median(late) * 1000:.1f} ms, "
        f"p99 {pct(late, 99) * 1000:.1f} ms, max {max(late) * 1000:.1f} ms"
    )

    start = time.time() + 1.0
    await one_time(board, store, args.burst, start, 0.0)
    began = time.perf_counter()
    await run_clock(chat, 1.0 + 0.5)
    clock = RoutineClock(chat)
    while len(await lateness(store, start - 0.5)) < args.burst:
        await clock.tick(time.time())
    late = await lateness(store, start - 0.5)
    print(
        f"burst: {args.burst} routines due at one moment: the last fired "
        f"{max(late) * 1000:.0f} ms after it (p50 {statistics.median(late) * 1000:.0f} ms), "
        f"{time.perf_counter() - began - 1.0:.1f} s in all"
    )


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="routines-") as folder:
        repo = Path(folder) / "repo"
        (repo / "docs" / "intent").mkdir(parents=True)
        server = None
        if args.engine == "postgresql":
            server = Postgres(durable=True).start()
            url = server.url(server.fresh_schema())
            store = await Store.open(url, password_file=server.password_file)
        else:
            store = await Store.open(Path(folder) / "board.sqlite3")
        try:
            await measure(store, repo, args)
        finally:
            await store.close()
            if server is not None:
                server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routines", type=int, default=10_000)
    parser.add_argument("--due", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--engine", choices=("sqlite", "postgresql"), default="sqlite")
    asyncio.run(main(parser.parse_args()))
