"""Three `chatbot worker` processes as on three hosts: one PostgreSQL, one bare git remote.

Each worker has its own folder (configuration, workspaces, its own clone of the
remote) and its own host name, so nothing is shared but the database and the
remote, as across machines. The test itself plays the bot: it imports the cards
from its own clone and moves them, and watches the board through the database's
commit notifications (no polling).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from chatbot.board import BoardService
from chatbot.store import Store
from tests.pipeline.harness import (
    BIN,
    STAND_IN_RUNTIMES,
    builder_answer,
    direct,
    git,
    review_answer,
)
from tests.realservers.postgres import Postgres

DEPLOY_LOG = "deploys.log"

WORKER_CONFIG = (
    """
[bot]
owners = ["owner@example.org"]
# The scripted stand-ins read and write test files outside any worktree: no sandbox.
sandbox = "off"
database = "{database}"
database_password_file = "{password_file}"
repo = "{remote}"
workspaces = "workspaces"

[workers]
lease_s = {lease_s}
heartbeat_s = {heartbeat_s}
host = "{host}"

"""
    + STAND_IN_RUNTIMES
    + """
[lanes.light]
runtime = "codex"
model = "gpt-5-codex-mini"
reasoning_effort = "medium"
iteration_limit = 5
concurrency = 2
timeout_s = 60
idle_timeout_s = 60

[roles.reviewer]
runtime = "claude"
model = "claude-sonnet-4-5"
timeout_s = 120
idle_timeout_s = 120

[deploy]
command = ["sh", "-c", "echo \\"$0 $1\\" >> {deploy_log}", "{{slug}}", "{{commit}}"]
branch = "main"
"""
)


def make_remote(root: Path, slugs: list[str]) -> Path:
    """A bare remote whose main holds one intent per slug."""
    remote = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    seed = root / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    git(seed, "config", "user.name", "Test Owner")
    git(seed, "config", "user.email", "owner@example.org")
    (seed / "README.md").write_text("# shared\n")
    for slug in slugs:
        intent = seed / "docs" / "intent" / f"{slug}.md"
        intent.parent.mkdir(parents=True, exist_ok=True)
        intent.write_text(f"# {slug}\n\nMake {slug}.\n")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "intents")
    git(seed, "remote", "add", "origin", str(remote))
    git(seed, "push", "-q", "origin", "main")
    return remote


def scenario(slugs: list[str], *, first_review: dict | None = None) -> dict:
    """Every operator says "light lane", every review approves the commit it sees;
    each card's builder writes a file of its own (the merges never conflict)."""
    turns: list[dict] = []
    if first_review is not None:
        turns.append({"match": "REVIEW-RESULT", **first_review})
    turns += [
        {"match": "REVIEW-RESULT", "repeat": True, "answer": review_answer("approve")},
        {"match": "OPERATOR-DECISION", "repeat": True, "answer": direct("light")},
    ]
    turns += [
        {
            "match": f"`card/{slug}`",
            "cli": "codex",
            "answer": builder_answer(f"Make {slug}"),
            "files": {f"src/{slug}.txt": f"{slug}\n"},
        }
        for slug in slugs
    ]
    return {"turns": turns}


@dataclass
class Fleet:
    root: Path
    postgres: Postgres
    remote: Path
    lease_s: float = 2.0
    heartbeat_s: float = 0.5
    database: str = ""
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.database = self.postgres.url(self.postgres.fresh_schema())
        self.env = {
            **os.environ,
            "FAKE_CLI_SCENARIO": str(self.root / "scenario.json"),
            "FAKE_CLI_STATE": str(self.root / "scenario.state.json"),
            "FAKE_CLI_LOG": str(self.root / "calls.jsonl"),
        }

    def write_scenario(self, content: dict) -> None:
        (self.root / "scenario.json").write_text(json.dumps(content))

    def config_for(self, host: str) -> Path:
        folder = self.root / host
        folder.mkdir(exist_ok=True)
        path = folder / "worker.toml"
        path.write_text(
            WORKER_CONFIG.format(
                database=self.database,
                password_file=self.postgres.password_file,
                remote=f"file://{self.remote}",
                lease_s=self.lease_s,
                heartbeat_s=self.heartbeat_s,
                host=host,
                bin=BIN,
                deploy_log=self.root / DEPLOY_LOG,
            )
        )
        return path

    def start(self, host: str) -> subprocess.Popen:
        log = open(self.root / f"{host}.log", "ab")  # noqa: SIM115 - handed to the child
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "chatbot", "worker", "--config", str(self.config_for(host))],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        finally:
            log.close()
        self.processes[host] = process
        return process

    def kill(self, host: str) -> None:
        self.processes[host].send_signal(signal.SIGKILL)
        self.processes[host].wait(10)

    def stop(self) -> dict[str, int | None]:
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        codes = {}
        for host, process in self.processes.items():
            try:
                codes[host] = process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                codes[host] = process.wait(10)
        return codes

    def logs(self) -> str:
        return "".join(
            f"--- {host} ---\n" + (self.root / f"{host}.log").read_text(errors="replace")[-3000:]
            for host in self.processes
        )

    def deploys(self) -> list[list[str]]:
        path = self.root / DEPLOY_LOG
        return [line.split() for line in path.read_text().splitlines()] if path.exists() else []

    async def board(self) -> tuple[Store, BoardService]:
        """The test's own view, as the bot has it: the store and a clone of the remote."""
        store = await Store.open(self.database, password_file=self.postgres.password_file)
        clone = self.root / "bot-clone"
        git(self.root, "clone", "-q", str(self.remote), str(clone))
        board = BoardService(store, clone, default_lane="light", deploy_configured=True)
        await board.import_cards()
        return store, board


async def until(store: Store, condition: Callable[[], object], timeout: float) -> None:
    """Wait for `condition()` (a coroutine function) to hold, re-checked on each commit of
    any process on the database (LISTEN/NOTIFY)."""
    changed = asyncio.Event()
    store.on_commit.append(changed.set)
    try:
        async with asyncio.timeout(timeout):
            await store.wait_listening()
            while not await condition():
                await changed.wait()
                changed.clear()
    finally:
        store.on_commit.remove(changed.set)
