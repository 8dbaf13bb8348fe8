"""Dispatch overhead: from a job being queued to its runtime process having started.

The real board service and worker run an operator job per card on a board of
--cards cards. The "CLI" is a tiny bash script standing in for codex: its first
command writes bash's $EPOCHREALTIME (wall clock, microseconds) to a file, then
it drains its stdin and prints a canned `codex exec --json` answer (needs_human),
so the job completes and the next run can start. Runs are one at a time, so the
numbers are the worker's overhead, not time spent queueing behind other jobs.

For each run it reports, against the job's `created_at` (time.time() when the
job row is inserted, inside the owner's /start transaction):

- claimed:        the job's `started_at` (the worker's claim),
- exec returned:  the event loop's subprocess_exec returned in the worker (fork +
                  exec succeeded; measured by wrapping that function),
- child started:  the child's own first timestamp: includes exec and bash's
                  start-up, so it is the honest "the process is running" moment.

Then the worker's resident memory (RSS of this process, where the worker runs)
with the board loaded: after the runs and after reading every card's view.

On PostgreSQL (`--engine postgresql`, or `both`, the default, for the two side by
side) the board lives in a real server started here (Debian's package, as the tests
start it, with fsync on and synchronous_commit off: the same trade as SQLite's WAL
with synchronous=NORMAL), and the worker is woken through LISTEN/NOTIFY like a
worker on another host would be: the /start is committed by a second store, not
the worker's own.

With `--sandbox both` (the default where bubblewrap is installed) each engine runs
twice: agents unconfined, and each in its bubblewrap sandbox with the provider network
(the bot's forwarder outside, the relay inside starting the CLI), as a lane with a
`base_url` runs by default. The difference in "the child's first instruction" is what
the sandbox adds to a spawn.

    .venv/bin/python bench/dispatch.py [--runs 200] [--cards 10000] [--warmup 5]
        [--engine both|sqlite|postgresql] [--sandbox both|on|off]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chatbot.app.startup import make_worker  # noqa: E402
from chatbot.board import BoardService, Change  # noqa: E402
from chatbot.config import parse_config  # noqa: E402
from chatbot.domain.phases import Phase  # noqa: E402
from chatbot.domain.transitions import Action  # noqa: E402
from chatbot.store import Db, Store  # noqa: E402
from runners.sandbox import find_tool  # noqa: E402
from tests.realservers.postgres import Postgres  # noqa: E402

TARGET_P99_MS = 50.0
TARGET_RSS_MB = 100.0
OWNER = "owner@example.org"

FAKE_CLI = """#!/bin/bash
printf '%s\\n' "$EPOCHREALTIME" >> "$BENCH_DISPATCH_STARTS"
cat > /dev/null
cat "$BENCH_DISPATCH_ANSWER"
"""

CONFIG = """
[bot]
owners = ["{owner}"]
sandbox = "{sandbox}"
database = "board.sqlite3"
repo = "repo"
workspaces = "workspaces"

[runtimes.codex]
binary = "{cli}"
pass_env = ["BENCH_DISPATCH_STARTS", "BENCH_DISPATCH_ANSWER"]
# In the sandbox: where the stand-in is, what it reads and writes; a provider to forward
# to (never called: the stand-in answers by itself).
read_paths = ["cli"]
write_paths = ["out"]
base_url = "http://127.0.0.1:9/v1"

[lanes.light]
runtime = "codex"
model = "gpt-5-codex-mini"
reasoning_effort = "medium"
iteration_limit = 5
concurrency = 2
"""


def canned_answer() -> str:
    decision = {
        "schema_version": 1,
        "decision": "needs_human",
        "reason": "benchmark",
        "recommended_lane": None,
        "runtime": None,
        "model": None,
        "reasoning_effort": None,
        "human_action": "Nothing; this is a benchmark.",
        "escalation": [],
        "children": [],
    }
    text = f"===OPERATOR-DECISION===\n{json.dumps(decision)}\n===END-OPERATOR-DECISION==="
    usage = {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 10}
    events = [
        {"type": "thread.started", "thread_id": str(uuid.uuid4())},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": text}},
        {"type": "turn.completed", "usage": usage},
    ]
    return "".join(json.dumps(event) + "\n" for event in events)


def make_repo(root: Path, slugs: list[str]) -> Path:
    repo = root / "repo"
    (repo / "docs" / "intent").mkdir(parents=True)
    for slug in slugs:
        (repo / "docs" / "intent" / f"{slug}.md").write_text(
            f"# Benchmark card {slug}\n\nAdd a function `{slug.replace('-', '_')}()`.\n"
        )
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost"}
    env |= {"GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "cards"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)
    return repo


async def fill_board(store: Store, count: int, first: int) -> None:
    """`count` more cards, shaped like real ones, in a few phases; one event each."""
    phases = ["planned"] * 6 + ["done", "deployed", "failed", "ready_for_deployment"]
    now = time.time()
    rows = []
    for number in range(first, first + count):
        phase = phases[number % len(phases)]
        data = {"operator_reason": "a small change in one module", "answers": []}
        rows.append(
            (
                f"card-{number:05d}",
                f"Card {number}: a piece of work described in a sentence",
                phase,
                "light",
                json.dumps([f"src/module_{number}/"]),
                json.dumps(["the tests pass", "the change is documented"]),
                "builder" if phase == "failed" else None,
                "codex: exited with status 1" if phase == "failed" else None,
                f"docs/intent/card-{number:05d}.md",
                json.dumps(data),
                now,
                now,
            )
        )
    async with store.transaction() as db:
        await db.executemany(
            "INSERT INTO cards (slug, kind, title, phase, version, lane, write_scope, "
            "acceptance_criteria, failure_stage, failure_detail, source_path, data, "
            "created_at, updated_at) VALUES (?, 'intent', ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        await db.execute(
            "INSERT INTO events (card_id, seq, from_phase, to_phase, action, actor, at) "
            "SELECT id, 1, NULL, phase, 'import', 'system', ? FROM cards "
            "WHERE id NOT IN (SELECT card_id FROM events)",
            (now,),
        )


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / 1e6


async def run_jobs(
    owner_board: BoardService,
    board: BoardService,
    store: Store,
    slugs: list[str],
    warmup: int,
    finished: dict[str, asyncio.Event],
    spawned: list[tuple[str, float]],
    launchers: set[str],
    starts_file: Path,
) -> tuple[list[dict[str, float]], float]:
    """/start each card in turn and wait for its operator run to end; one sample per run."""
    samples = []
    started = time.perf_counter()
    for index, slug in enumerate(slugs):
        finished[slug] = asyncio.Event()
        before_spawns = len(spawned)
        card = await owner_board.act(slug, Action.START, actor=OWNER)
        await asyncio.wait_for(finished[slug].wait(), timeout=30)
        async with store.transaction():
            pass  # the listener ran inside the result's transaction: let it commit
        job = await store.reader.fetchone(
            "SELECT created_at, started_at, state FROM jobs WHERE card_id = ? "
            "ORDER BY id DESC LIMIT 1",
            (card.id,),
        )
        if job is None or job["state"] != "done":
            failed = await owner_board.reads.card(slug)
            raise SystemExit(f"{slug}: its run did not end well: {failed.failure_detail}")
        mine = [t for program, t in spawned[before_spawns:] if program in launchers]
        assert len(mine) == 1, spawned[before_spawns:]
        child = float(starts_file.read_text().split()[index])
        if index >= warmup:
            samples.append(
                {
                    "claimed": job["started_at"] - job["created_at"],
                    "exec": mine[0] - job["created_at"],
                    "child": child - job["created_at"],
                }
            )
    elapsed = time.perf_counter() - started
    return samples, elapsed


async def bench(
    root: Path,
    runs: int,
    warmup: int,
    cards: int,
    database: str | None = None,
    password=None,
    *,
    sandbox: bool = False,
) -> dict:
    slugs = [f"run-{i:04d}" for i in range(runs + warmup)]
    repo = make_repo(root, slugs)
    (root / "cli").mkdir()
    (root / "out").mkdir()
    cli = root / "cli" / "instant-codex"
    cli.write_text(FAKE_CLI)
    cli.chmod(0o755)
    starts_file = root / "out" / "starts.txt"
    answer_file = root / "cli" / "answer.jsonl"
    answer_file.write_text(canned_answer())
    os.environ["BENCH_DISPATCH_STARTS"] = str(starts_file)
    os.environ["BENCH_DISPATCH_ANSWER"] = str(answer_file)
    config_path = root / "bot.toml"
    text = CONFIG.format(owner=OWNER, cli=cli, sandbox="bwrap" if sandbox else "off")
    if database is not None:
        text = text.replace(
            'database = "board.sqlite3"',
            f'database = "{database}"\ndatabase_password_file = "{password}"',
        )
    config_path.write_text(text)
    config = parse_config(text, config_path)
    assert repo == config.bot.checkout

    # Every process the worker execs, and when the exec returned.
    # Hooked at the event loop, where every asyncio subprocess (the runner's included)
    # is started.
    spawned: list[tuple[str, float]] = []
    loop = asyncio.get_running_loop()
    real_exec = loop.subprocess_exec

    async def timed_exec(protocol_factory, program, *args, **kwargs):
        result = await real_exec(protocol_factory, program, *args, **kwargs)
        spawned.append((str(program), time.time()))
        return result

    loop.subprocess_exec = timed_exec  # type: ignore[method-assign]

    rss_empty = rss_mb()
    store = await Store.open(config.bot.database, password_file=config.bot.database_password_file)
    # The owner's moves come through a store of their own: on PostgreSQL the worker
    # then hears of them as from another host (NOTIFY), not from its own commit hook.
    owner_store = (
        await Store.open(config.bot.database, password_file=config.bot.database_password_file)
        if database is not None
        else store
    )
    try:
        board = BoardService(store, repo, default_lane="light")
        owner_board = BoardService(owner_store, repo, default_lane="light")
        await board.import_cards()
        await fill_board(store, cards - len(slugs), first=0)
        total = (await board.reads.summary()).total

        finished: dict[str, asyncio.Event] = {}

        async def on_change(_db: Db, change: Change) -> None:
            if change.card.phase is Phase.NEEDS_HUMAN and change.card.slug in finished:
                finished[change.card.slug].set()

        board.listeners.append(on_change)
        worker = make_worker(config, board, instance_id=uuid.uuid4().hex, poll_s=5.0)
        stop = asyncio.Event()
        worker_task = asyncio.create_task(worker.run(stop=stop))
        try:
            if database is not None:
                await store.wait_listening()
            samples, elapsed = await run_jobs(
                owner_board,
                board,
                store,
                slugs,
                warmup,
                finished,
                spawned,
                {str(cli), find_tool() or str(cli)},
                starts_file,
            )
        finally:
            stop.set()
            await worker_task

        rss_after_runs = rss_mb()
        views = await board.reads.all_views()
        rss_after_views = rss_mb()
    finally:
        loop.subprocess_exec = real_exec  # type: ignore[method-assign]
        if owner_store is not store:
            await owner_store.close()
        await store.close()
    return {
        "samples": samples,
        "elapsed": elapsed,
        "total": total,
        "views": len(views),
        "rss_empty": rss_empty,
        "rss_after_runs": rss_after_runs,
        "rss_after_views": rss_after_views,
    }


def report(engine: str, result: dict, warmup: int, sandbox: bool = False) -> None:
    samples = result["samples"]
    confined = "in the bubblewrap sandbox (provider network)" if sandbox else "unconfined"
    print(
        f"dispatch on {engine}, agents {confined}: {len(samples)} operator jobs one at a "
        f"time on a board of {result['total']} cards ({warmup} warm-up runs not counted), "
        f"{result['elapsed']:.1f} s in all"
    )
    print(f"{'from the job being queued to':34} {'p50':>9} {'p99':>9} {'max':>9}")
    rows = [
        ("the worker claiming it", "claimed", ""),
        ("exec returned in the worker", "exec", ""),
        ("the child's first instruction", "child", f"   target: p99 < {TARGET_P99_MS:g} ms"),
    ]
    for label, key, target in rows:
        values = [sample[key] * 1000 for sample in samples]
        print(
            f"{label:34} {percentile(values, 0.5):6.2f} ms {percentile(values, 0.99):6.2f} ms "
            f"{max(values):6.2f} ms{target}"
        )
    print(
        f"worker RSS: {result['rss_empty']:.1f} MB before the board was opened; "
        f"{result['rss_after_runs']:.1f} MB with {result['total']} cards after the runs; "
        f"{result['rss_after_views']:.1f} MB after reading all {result['views']} card views"
        f"   target: < {TARGET_RSS_MB:g} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--engine", choices=("both", "sqlite", "postgresql"), default="both")
    default = "both" if find_tool() else "off"
    parser.add_argument("--sandbox", choices=("both", "on", "off"), default=default)
    args = parser.parse_args()
    if args.sandbox == "on" and find_tool() is None:
        parser.error("--sandbox on needs bubblewrap (apt-get install bubblewrap)")
    if args.engine == "both" or args.sandbox == "both":
        # One process per engine and sandbox: the memory figures are each one's own.
        engines = ("sqlite", "postgresql") if args.engine == "both" else (args.engine,)
        sandboxes = ("off", "on") if args.sandbox == "both" else (args.sandbox,)
        for engine in engines:
            for sandbox in sandboxes:
                argv = [sys.executable, __file__, "--engine", engine, "--runs", str(args.runs)]
                argv += ["--warmup", str(args.warmup), "--cards", str(args.cards)]
                subprocess.run([*argv, "--sandbox", sandbox], check=True)
        return
    sandbox = args.sandbox == "on"
    for engine in (args.engine,):
        with tempfile.TemporaryDirectory(prefix="bench-dispatch-") as tmp:
            if engine == "sqlite":
                result = asyncio.run(
                    bench(Path(tmp), args.runs, args.warmup, args.cards, sandbox=sandbox)
                )
            else:
                server = Postgres(durable=True).start()
                try:
                    url = server.url(server.fresh_schema())
                    result = asyncio.run(
                        bench(
                            Path(tmp),
                            args.runs,
                            args.warmup,
                            args.cards,
                            url,
                            server.password_file,
                            sandbox=sandbox,
                        )
                    )
                finally:
                    server.stop()
        report(engine, result, args.warmup, sandbox)


if __name__ == "__main__":
    main()
