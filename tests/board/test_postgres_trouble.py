"""PostgreSQL as an operator meets it: a login the server refuses, and an outage.

`chatbot`'s commands against a real PostgreSQL (their `main`, tests/inprocess.py; the
worker under the outage is a process of its own): the session's server for the logins,
and a server of the test's own for the outage (it is stopped under a running worker,
which the shared one must never be).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.child_output import Output, kill_tree
from tests.inprocess import chatbot, in_thread
from tests.realservers.postgres import Postgres

FAKE_CODEX = str(Path(__file__).resolve().parents[1] / "bin" / "codex")

CONFIG = """
[bot]
owners = ["owner@example.org"]
# The scripted stand-ins read and write test files outside any worktree: no sandbox.
sandbox = "off"
database = "{database}"
{password}repo = "repo"
[workers]
lease_s = 2
heartbeat_s = 0.2
[runtimes.codex]
binary = "{codex}"
pass_env = ["FAKE_CLI_SCENARIO", "FAKE_CLI_STATE", "FAKE_CLI_LOG"]
[lanes.light]
runtime = "codex"
model = "gpt-5-codex-mini"
iteration_limit = 10
"""
# How every log record starts: a record of more than one line shows as a line without it.
RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ [\w.]+: ")


def write_config(folder: Path, database: str, password_file: Path | None = None) -> Path:
    repo = folder / "repo"
    (repo / "docs" / "intent").mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    password = f'database_password_file = "{password_file}"\n' if password_file else ""
    config = folder / "bot.toml"
    config.write_text(CONFIG.format(database=database, password=password, codex=FAKE_CODEX))
    return config


def test_a_refused_login_names_the_password_key(tmp_path: Path, postgres: Postgres) -> None:
    url = postgres.url(postgres.fresh_schema())
    config = write_config(tmp_path, url)
    # Without the key the bot connects without a password (trust, peer, ~/.pgpass): this
    # server wants one, and the one line says which key gives it.
    for command in (["cards"], ["worker", "--until-idle"]):
        result = chatbot(*command, "--config", str(config))
        assert result.returncode == 1, result.stderr
        [line] = result.stderr.splitlines()
        assert line.startswith(f"chatbot: cannot use the database {url}: "), line
        assert line.endswith(
            "no password supplied; the server wants a password: set "
            "bot.database_password_file to a file holding it"
        ), line
    check = chatbot("check", "--config", str(config))
    assert check.returncode == 1 and "Traceback" not in check.stderr
    assert "database: NOT usable: " in check.stdout
    assert "set bot.database_password_file to a file holding it" in check.stdout
    offline = chatbot("check", "--no-connect", "--config", str(config))
    assert f"database: {url} (PostgreSQL; no bot.database_password_file;" in offline.stdout

    wrong = tmp_path / "wrong-password"
    wrong.write_text("not-the-password\n")
    config = write_config(tmp_path, url, wrong)
    result = chatbot("cards", "--config", str(config))
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert 'password authentication failed for user "chatbot"' in line
    assert line.endswith(f"; check the password in bot.database_password_file ({wrong})"), line


async def test_a_database_outage_is_one_line_per_failure(tmp_path: Path) -> None:
    server = Postgres().start()
    worker = None
    try:
        url = server.url()
        config = write_config(tmp_path, url, server.password_file)
        (tmp_path / "repo" / "docs" / "intent" / "alpha.md").write_text("# Alpha\n")
        # An operator run that is under way when the database goes: its lease's renewals fail.
        scenario = tmp_path / "scenario.json"
        scenario.write_text(json.dumps({"turns": [{"hang": "before_output"}]}))
        env = {
            **os.environ,
            "FAKE_CLI_SCENARIO": str(scenario),
            "FAKE_CLI_STATE": str(tmp_path / "state.json"),
            "FAKE_CLI_LOG": str(tmp_path / "calls.jsonl"),
        }
        started = await in_thread("start", "alpha", "--config", str(config), env=env)
        assert started.returncode == 0, started.stderr
        worker = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "chatbot", "worker", "--config", str(config)),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=env,
        )
        output = Output(worker)
        await output.said("starting codex run", 60)
        server.stop()  # the outage: the worker's connections go, new ones are refused
        keep_alive = await output.said("worker keep-alive failed", 90)
        lease = await output.said("lease not renewed", 90)
        listener = await output.said("listener lost", 60)
        pool = await output.said("error connecting in", 60)  # psycopg's pool refilling
        kill_tree(worker.pid)  # a clean stop waits out the pool's timeouts; not the point
        await worker.wait()
        log = await output.rest()
    finally:
        if worker is not None and worker.returncode is None:
            kill_tree(worker.pid)
            await worker.wait()
        server.stop()
    assert "Traceback" not in log
    strays = [line for line in log.splitlines() if line.strip() and not RECORD.match(line)]
    assert strays == [], log
    # Each names the database (never its password) and the reason.
    for line in (keep_alive, lease):
        assert f"(database {url}: " in line, line
    assert f"database {url}: listener lost (" in listener
    assert f"error connecting in '{url}': " in pool
    assert server.password not in log
