"""Throughput of no-op jobs with 1, 2 and 4 worker processes on one PostgreSQL.

Each worker is a process of its own, as on a host of its own (its own host name,
its own store and pool, woken by LISTEN/NOTIFY), running the real Worker: claim
(FOR UPDATE SKIP LOCKED within the lane's global limit), heartbeat, the model run,
the result applied with the job's completion in one transaction. The "model" is
a bash script standing in for codex that answers at once (needs_human), so a job
costs only the machinery: what is measured is how many jobs per second the queue
and the workers get through, and how that changes with more worker processes.

All jobs are queued in one transaction, then the clock runs until every card has
its answer (the bench waits on the database's commit notifications). The lane
allows --slots jobs at once over all workers together; each worker may take all
of them, so one worker is not held back by a per-process limit.

    .venv/bin/python bench/workers.py [--jobs 400] [--slots 8] [--workers 1,2,4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.dispatch import FAKE_CLI, canned_answer, make_repo  # noqa: E402
from chatbot.app.startup import make_worker, running_bot  # noqa: E402
from chatbot.config import parse_config  # noqa: E402
from chatbot.store import Store  # noqa: E402
from tests.realservers.postgres import Postgres  # noqa: E402

CONFIG = """
[bot]
owners = ["owner@example.org"]
database = "{database}"
database_password_file = "{password}"
repo = "{repo}"
workspaces = "workspaces"

[workers]
host = "{host}"

[runtimes.codex]
binary = "{cli}"
pass_env = ["BENCH_DISPATCH_STARTS", "BENCH_DISPATCH_ANSWER"]

[lanes.light]
runtime = "codex"
model = "gpt-5-codex-mini"
iteration_limit = 5
"""


async def serve(config_path: Path, slots: int) -> None:
    """One worker process (`--serve`): the real worker until SIGTERM."""
    config = parse_config(config_path.read_text(), config_path)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with running_bot(config, chat=False, worker=False) as bot:
        worker = make_worker(
            config, bot.board, instance_id=uuid.uuid4().hex, role_concurrency=slots
        )
        await worker.run(stop=stop)


async def queue_all(store: Store, jobs: int) -> float:
    """Every card moved to operator_running with its job, in one transaction."""
    now = time.time()
    async with store.transaction() as db:
        await db.executemany(
            "INSERT INTO cards (slug, kind, title, phase, version, lane, source_path, "
            "created_at, updated_at) VALUES (?, 'intent', ?, 'operator_running', 1, 'light', "
            "?, ?, ?)",
            [(f"job-{i:05d}", f"Job {i}", f"docs/intent/job-{i:05d}.md", now, now)
             for i in range(jobs)],
        )  # fmt: skip
        await db.execute(
            "INSERT INTO events (card_id, seq, from_phase, to_phase, action, actor, at) "
            "SELECT id, 1, NULL, phase, 'import', 'system', ? FROM cards",
            (now,),
        )
        await db.execute(
            "INSERT INTO jobs (card_id, kind, lane, state, payload, created_at) "
            "SELECT id, 'operator', 'role:operator', 'queued', '{}', ? FROM cards",
            (now,),
        )
    return time.perf_counter()


async def measure(root: Path, server: Postgres, workers: int, jobs: int, slots: int) -> dict:
    url = server.url(server.fresh_schema())
    repo = make_repo(root, [f"job-{i:05d}" for i in range(jobs)])
    cli = root / "instant-codex"
    cli.write_text(FAKE_CLI)
    cli.chmod(0o755)
    (root / "answer.jsonl").write_text(canned_answer())
    env = {
        **os.environ,
        "BENCH_DISPATCH_STARTS": str(root / "starts.txt"),
        "BENCH_DISPATCH_ANSWER": str(root / "answer.jsonl"),
    }
    store = await Store.open(url, password_file=server.password_file)
    processes = []
    try:
        for number in range(workers):
            host = f"bench-{number + 1}"
            config = root / f"{host}.toml"
            config.write_text(
                CONFIG.format(
                    database=url, password=server.password_file, repo=repo, host=host, cli=cli
                )
            )
            log = open(root / f"{host}.log", "ab")  # noqa: SIM115 - handed to the child
            processes.append(
                subprocess.Popen(
                    [sys.executable, __file__, "--serve", str(config), "--slots", str(slots)],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
            log.close()
        # Every worker registered (and so listening) before the clock starts.
        changed = asyncio.Event()
        store.on_commit.append(changed.set)
        await store.wait_listening()

        async def count(sql: str) -> int:
            row = await store.reader.fetchone(sql)
            return int(row[0]) if row else 0

        async with asyncio.timeout(60):
            while await count("SELECT count(*) FROM workers WHERE expires_at > 0") < workers:
                await changed.wait()
                changed.clear()
        cpu_before = _cpu(processes, server)
        started = await queue_all(store, jobs)
        async with asyncio.timeout(600):
            while await count("SELECT count(*) FROM jobs WHERE state = 'done'") < jobs:
                await changed.wait()
                changed.clear()
        elapsed = time.perf_counter() - started
        cpu_after = _cpu(processes, server)
        hosts = await store.reader.fetchall(
            "SELECT host, count(*) FROM jobs GROUP BY host ORDER BY host"
        )
        failed = await count("SELECT count(*) FROM jobs WHERE state <> 'done'")
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(60)
        await store.close()
    return {
        "cpu": {k: cpu_after[k] - cpu_before[k] for k in cpu_before},
        "elapsed": elapsed,
        "per_host": {row[0]: row[1] for row in hosts},
        "failed": failed,
    }


def _cpu(processes: list[subprocess.Popen], server: Postgres) -> dict[str, float]:
    """CPU seconds so far: the workers with their agents, and the database server."""

    def tree(pid: int) -> float:
        try:
            root = psutil.Process(pid)
            total = 0.0
            for proc in [root, *root.children(recursive=True)]:
                times = proc.cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
            return total
        except psutil.NoSuchProcess:
            return 0.0

    return {
        "workers": sum(tree(p.pid) for p in processes),
        "postgres": tree(server.pid or 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=400)
    parser.add_argument("--slots", type=int, default=8, help="the lane's limit, all hosts")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve, args.slots))
        return
    server = Postgres(durable=True).start()
    try:
        print(
            f"no-op jobs on PostgreSQL: {args.jobs} operator jobs (instant stand-in CLI), "
            f"lane limit {args.slots} over all workers, {os.cpu_count()} cores"
        )
        for workers in (int(n) for n in args.workers.split(",")):
            with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
                result = asyncio.run(measure(Path(tmp), server, workers, args.jobs, args.slots))
            share = ", ".join(f"{h} {n}" for h, n in result["per_host"].items())
            print(
                f"{workers} worker(s): {args.jobs / result['elapsed']:7.1f} jobs/s "
                f"({result['elapsed']:.2f} s; not done: {result['failed']}; per host: {share}; "
                f"CPU s: workers and agents {result['cpu']['workers']:.1f}, "
                f"PostgreSQL {result['cpu']['postgres']:.1f})"
            )
    finally:
        server.stop()


if __name__ == "__main__":
    main()
