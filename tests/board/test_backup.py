"""`chatbot backup` and `chatbot restore` as a user runs them (real processes, real files),
on SQLite and on the real PostgreSQL, while a store is written in another task."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from chatbot.app.startup import make_worker, running_bot
from chatbot.board import BoardService
from chatbot.config import parse_config
from chatbot.domain.transitions import Action
from chatbot.store import Store, kv
from chatbot.store import chat as chat_store
from chatbot.store import questions as question_store
from chatbot.store import workers as worker_rows
from tests.inprocess import in_thread
from tests.pipeline.harness import BIN, CONFIG, make_repo

OWNER = "owner@example.org"
INTENTS = {"alpha": "# Alpha\n", "beta": "# Beta\n", "gamma": "# Gamma\n"}
# What a restored bot must find as it was.
COMPARED = ("cards", "events", "questions", "outbox", "jobs")


async def chatbot(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The real command's `main`; this loop keeps running meanwhile."""
    return await in_thread(*args)


def config_text(database: Any, extra: str = "") -> str:
    text = CONFIG.format(bin=BIN) + extra
    return text.replace('database = "board.sqlite3"\n', database.toml(), 1)


def write_config(root: Path, database: Any, extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "bot.toml"
    path.write_text(config_text(database, extra))
    return path


def restored_target(engine: str, tmp_path: Path, database: Any, request: Any) -> Any:
    """Where a fresh bot's board goes: a new folder, or a new PostgreSQL database that reads
    the same schema (pg_restore puts tables back into the schema they came from)."""
    from tests.conftest import Database

    if engine == "sqlite":
        return Database(tmp_path / "fresh" / "board.sqlite3")
    server = request.getfixturevalue("postgres")
    name = "r_" + secrets.token_hex(5)
    server._psql(f"CREATE DATABASE {name}")
    schema = str(database.value).split("search_path%3D")[1]
    url = server.url(schema).replace("/chatbot?", f"/{name}?")
    return Database(url, server.password_file)


async def board_with_a_bit_of_everything(root: Path, database: Any) -> tuple[Store, BoardService]:
    """Cards in several phases, a question, a post waiting in the outbox, a queued job
    and one running under a worker that is alive (as in a running bot)."""
    root.mkdir(parents=True, exist_ok=True)
    make_repo(root, INTENTS)
    path = write_config(root, database)
    config = parse_config(path.read_text(), path)
    store = await Store.open(config.bot.database, password_file=config.bot.database_password_file)
    board = BoardService(store, config.bot.repo, default_lane="light")
    await board.import_cards()
    await board.act("alpha", Action.START, actor=OWNER)
    await board.act("beta", Action.START, actor=OWNER)
    worker = make_worker(config, board, instance_id="before-the-backup")
    await worker.register()
    alpha = await board.reads.card("alpha")
    lane = next(job.lane for job in await board.reads.active_jobs() if job.card_id == alpha.id)
    job = await board.queue.claim(lane, worker.instance_id, lease_s=600)
    assert job is not None and job.state == "running"
    card = await board.reads.card("gamma")
    async with store.transaction() as db:
        await question_store.ask(db, card.id, "operator", "Which storage?", ["S3", "disk"])
        await chat_store.enqueue(db, chat_store.Post("xmpp", "room@conf.example.org", "hello"))
    return store, board


async def dump(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    found = {}
    for table in COMPARED:
        rows = await store.reader.fetchall(f"SELECT * FROM {table} ORDER BY id")
        found[table] = [tuple(row) for row in rows]
    return found


async def keep_writing(store: Store, stop: asyncio.Event, under_way: asyncio.Event) -> int:
    """Two keys always written together: a snapshot that is one moment has them equal."""
    n = 0
    while not stop.is_set():
        n += 1
        async with store.transaction() as db:
            await kv.set_value(db, "test:first", str(n))
            await asyncio.sleep(0)
            await kv.set_value(db, "test:second", str(n))
        under_way.set()
        # A breath between commits, so the backup's own reads get their turn.
        await asyncio.sleep(0.001)
    return n


async def test_backup_while_written_then_restore_resumes_where_it_was(
    engine: str, database: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    source = tmp_path / "live"
    store, _board = await board_with_a_bit_of_everything(source, database)
    try:
        before = await dump(store)
        stop, under_way = asyncio.Event(), asyncio.Event()
        writer = asyncio.create_task(keep_writing(store, stop, under_way))
        await under_way.wait()  # the writer has committed when the backup starts
        made = await chatbot("backup", tmp_path / "backup", "--config", source / "bot.toml")
        stop.set()
        written = await writer
    finally:
        await store.close()
    assert made.returncode == 0, made.stderr
    assert ", the configuration; " in made.stdout and "secrets are not in it" in made.stdout
    assert written > 1
    manifest = json.loads((tmp_path / "backup" / "manifest.json").read_text())
    assert manifest["engine"] == engine
    assert manifest["schema_step"] > 0 and manifest["created_at"] and manifest["bot_version"]
    assert (tmp_path / "backup").stat().st_mode & 0o777 == 0o700
    for entry in manifest["files"]:
        assert (tmp_path / "backup" / entry["path"]).stat().st_mode & 0o077 == 0
        data = (tmp_path / "backup" / entry["path"]).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (entry["size"], entry["sha256"])

    target = restored_target(engine, tmp_path, database, request)
    fresh_root = tmp_path / "fresh"
    fresh_root.mkdir(exist_ok=True)
    make_repo(fresh_root, INTENTS)
    fresh = write_config(fresh_root, target)
    done = await chatbot("restore", tmp_path / "backup", "--config", fresh)
    assert done.returncode == 0, done.stderr
    assert "differs" in done.stdout  # another database: the configurations differ

    config = parse_config(fresh.read_text(), fresh)
    async with running_bot(config, chat=False) as bot:
        restored = await dump(bot.store)
        assert restored == before
        first = await kv.get_value(bot.store.reader, "test:first")
        second = await kv.get_value(bot.store.reader, "test:second")
        assert first is not None and first == second  # one moment, not a smear
        # The worker that ran the job is gone with the old bot: recovered as at a start.
        await bot.prepare()
        jobs = {job.card_id: job for job in await bot.board.reads.active_jobs()}
        alpha = await bot.board.reads.card("alpha")
        assert jobs[alpha.id].state == "queued"
        assert "the worker stopped" in (jobs[alpha.id].error or "")


async def test_backup_refuses_a_folder_that_is_not_empty(database: Any, tmp_path: Path) -> None:
    make_repo(tmp_path, INTENTS)
    config = write_config(tmp_path, database)
    folder = tmp_path / "backup"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    done = await chatbot("backup", folder, "--config", config)
    assert done.returncode == 1
    assert "is not empty" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


async def test_backup_into_a_link_to_nothing_says_so_in_one_line(
    database: Any, tmp_path: Path
) -> None:
    # Issue 33 point 7: it ended in a traceback (FileExistsError).
    make_repo(tmp_path, INTENTS)
    config = write_config(tmp_path, database)
    folder = tmp_path / "backup"
    folder.symlink_to(tmp_path / "nowhere")
    done = await chatbot("backup", folder, "--config", config)
    assert done.returncode == 1
    assert "is a link to nothing" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "nowhere").exists()


@pytest.fixture
async def backed_up(tmp_path: Path) -> tuple[Path, Path]:
    """A SQLite board backed up, and a fresh configuration to restore it into."""
    from tests.conftest import Database

    store, _ = await board_with_a_bit_of_everything(
        tmp_path / "live", Database(tmp_path / "live" / "board.sqlite3")
    )
    await store.close()
    made = await chatbot("backup", tmp_path / "backup", "--config", tmp_path / "live" / "bot.toml")
    assert made.returncode == 0, made.stderr
    fresh = write_config(tmp_path / "fresh", Database(tmp_path / "fresh" / "board.sqlite3"))
    return tmp_path / "backup", fresh


@pytest.mark.parametrize("damage", ["truncated", "altered"])
async def test_restore_refuses_a_damaged_backup_and_changes_nothing(
    backed_up: tuple[Path, Path], damage: str
) -> None:
    folder, fresh = backed_up
    database = folder / "board.sqlite3"
    data = database.read_bytes()
    if damage == "truncated":
        database.write_bytes(data[: len(data) // 2])
    else:
        database.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    done = await chatbot("restore", folder, "--config", fresh)
    assert done.returncode == 1
    assert "nothing was restored" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in fresh.parent.iterdir()) == ["bot.toml"]


async def test_restore_over_a_board_needs_force(engine: str, database: Any, tmp_path: Path) -> None:
    source = tmp_path / "live"
    store, board = await board_with_a_bit_of_everything(source, database)
    await store.close()
    made = await chatbot("backup", tmp_path / "backup", "--config", source / "bot.toml")
    assert made.returncode == 0, made.stderr
    store = await Store.open(database.value, password_file=database.password_file)
    try:
        async with store.transaction() as db:
            await db.execute("UPDATE cards SET title = 'changed after the backup'")
            # The worker's lease is renewed as its heartbeat would: on a loaded box the
            # backup alone can outlast the lease, and a lapsed lease is no worker.
            await db.execute("UPDATE workers SET expires_at = ?", (time.time() + 3600,))
        refused = await chatbot("restore", tmp_path / "backup", "--config", source / "bot.toml")
        assert refused.returncode == 1
        assert "not empty" in refused.stderr and "--force" in refused.stderr
        titles = await store.reader.fetchall("SELECT DISTINCT title FROM cards")
        assert [row[0] for row in titles] == ["changed after the backup"]
        # The board's worker still holds its lease: even --force waits for it (issue 33).
        working = await chatbot(
            "restore", tmp_path / "backup", "--config", source / "bot.toml", "--force"
        )
        assert working.returncode == 1 and "worker running on" in working.stderr
        async with store.transaction() as db:
            await worker_rows.stopped(db, ["before-the-backup"])  # as a bot that stopped
    finally:
        await store.close()
    forced = await chatbot(
        "restore", tmp_path / "backup", "--config", source / "bot.toml", "--force"
    )
    assert forced.returncode == 0, forced.stderr
    assert "differs" not in forced.stdout
    store = await Store.open(database.value, password_file=database.password_file)
    try:
        titles = await store.reader.fetchall("SELECT title FROM cards ORDER BY slug")
        assert [row[0] for row in titles] == ["Alpha", "Beta", "Gamma"]
    finally:
        await store.close()


async def test_restore_names_every_missing_secret_file(
    backed_up: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, fresh = backed_up
    fresh.write_text(
        fresh.read_text()
        + '[web]\nlisten = "127.0.0.1:8099"\ntoken_file = "secrets/web-token"\n'
        + "[runtimes.openrouter]\n"
        + 'binary = "codex"\napi_key_file = "secrets/openrouter-key"\n'
    )
    done = await chatbot("restore", folder, "--config", fresh)
    assert done.returncode == 1
    assert "web.token_file" in done.stderr and "runtimes.openrouter.api_key_file" in done.stderr
    assert not (fresh.parent / "board.sqlite3").exists()


async def test_restore_refuses_while_a_bot_runs_on_the_database(
    backed_up: tuple[Path, Path],
) -> None:
    folder, fresh = backed_up
    make_repo(fresh.parent, INTENTS)
    config = parse_config(fresh.read_text(), fresh)
    async with running_bot(config, worker=False):
        done = await chatbot("restore", folder, "--config", fresh, "--force")
    assert done.returncode == 1
    assert "another bot is already running" in done.stderr and "stop it" in done.stderr


def test_a_backup_of_sqlite_is_one_file_a_plain_open_reads(tmp_path: Path) -> None:
    """No write-ahead log beside the copy: a copy of only the listed files is whole."""
    from chatbot.store.backup import copy_sqlite

    live = sqlite3.connect(tmp_path / "live.db", isolation_level=None)
    live.execute("PRAGMA journal_mode = WAL")
    live.execute("CREATE TABLE t (x)")
    live.execute("INSERT INTO t VALUES (1)")
    copy_sqlite(tmp_path / "live.db", tmp_path / "copy.db")
    assert sorted(os.listdir(tmp_path)) == ["copy.db", "live.db", "live.db-shm", "live.db-wal"]
    uri = f"file:{tmp_path / 'copy.db'}?mode=ro&immutable=1"
    assert sqlite3.connect(uri, uri=True).execute("SELECT x FROM t").fetchall() == [(1,)]
    live.close()


def _write_beside(database: Any, value: str) -> None:
    """A commit by another connection, as the bot makes while a backup runs."""
    sql = "INSERT INTO kv (key, value, updated_at) VALUES ('test:during', '{v}', 0)"
    if isinstance(database.value, Path):
        with sqlite3.connect(database.value) as conn:
            conn.execute(sql.format(v=value))
        return
    import psycopg

    password = database.password_file.read_text().strip()
    with psycopg.connect(database.value, password=password, autocommit=True) as conn:
        conn.execute(sql.format(v=value))


def _backed_up_text(engine: str, dump: Path) -> str:
    if engine == "sqlite":
        with sqlite3.connect(dump) as conn:
            return "\n".join(str(row) for row in conn.execute("SELECT * FROM kv"))
    done = subprocess.run(
        ["pg_restore", "--data-only", "--file=-", str(dump)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_the_crypto_store_is_taken_while_the_boards_moment_is_held(
    engine: str, database: Any, tmp_path: Path
) -> None:
    """What is committed while `during` runs (where the crypto store is copied) is not in
    the board's backup: the board is of the moment before, the crypto store no older."""
    from chatbot.store import backup as store_backup

    store = await Store.open(database.value, password_file=database.password_file)
    async with store.transaction() as db:
        await kv.set_value(db, "test:before", "in the backup")
    await store.close()
    dump = tmp_path / "board.backup"
    seen: list[str] = []

    def during() -> None:
        _write_beside(database, "committed during the backup")
        seen.append("during")

    if engine == "sqlite":
        snapshot = store_backup.snapshot_sqlite(database.value, dump, during)
    else:
        snapshot = store_backup.snapshot_postgres(
            database.value, database.password_file, dump, during
        )
    assert seen == ["during"] and snapshot.schema_step > 0
    text = _backed_up_text(engine, dump)
    assert "in the backup" in text
    assert "committed during the backup" not in text


async def test_a_manifest_that_points_outside_the_backup_is_refused(
    backed_up: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, fresh = backed_up
    (tmp_path / "elsewhere.txt").write_text("not part of the backup\n")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"].append({"path": "../elsewhere.txt", "kind": "config", "size": 23})
    (folder / "manifest.json").write_text(json.dumps(manifest))
    done = await chatbot("restore", folder, "--config", fresh)
    assert done.returncode == 1
    assert "leaves the backup" in done.stderr
    assert not (fresh.parent / "board.sqlite3").exists()


async def test_the_crypto_store_is_copied_whole_and_its_key_file_never(tmp_path: Path) -> None:
    """nio's SQLite store through the backup API (what its log holds included); a secret
    file kept in the store's folder (a key file) stays out, named in the manifest."""
    from chatbot.app.backup import take

    make_repo(tmp_path, INTENTS)
    crypto = tmp_path / "matrix-crypto"
    crypto.mkdir()
    (crypto / "store-key").write_text("a passphrase\n")
    nio = sqlite3.connect(crypto / "@bot:example.org_DEVICE.db", isolation_level=None)
    nio.execute("PRAGMA journal_mode = WAL")
    nio.execute("CREATE TABLE olm_sessions (session TEXT)")
    nio.execute("INSERT INTO olm_sessions VALUES ('pickled session')")
    text = CONFIG.format(bin=BIN) + (
        '[matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@bot:example.org"\n'
        'password_file = "matrix-crypto/store-key"\n'
    )
    path = tmp_path / "bot.toml"
    path.write_text(text)
    config = parse_config(text, path)
    store = await Store.open(config.bot.database)
    await store.close()
    (tmp_path / "backup").mkdir()
    manifest = take(config, tmp_path / "backup")
    nio.close()

    kept = sorted(p.name for p in (tmp_path / "backup" / "crypto-store").iterdir())
    assert kept == ["@bot:example.org_DEVICE.db"]
    copy = sqlite3.connect(tmp_path / "backup" / "crypto-store" / kept[0])
    assert copy.execute("SELECT session FROM olm_sessions").fetchall() == [("pickled session",)]
    assert {"key": "matrix.password_file", "path": "matrix-crypto/store-key"} in (
        manifest["secret_files"]
    )
    assert not any("store-key" in entry["path"] for entry in manifest["files"])


async def test_the_console_demo_backs_up_with_the_configuration_it_ran_with(
    tmp_path: Path,
) -> None:
    """No --config: the embedded demo writes the configuration it runs with to
    var/console/console.toml, and the backup takes it like any other."""

    async def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return await in_thread(*args, cwd=tmp_path)

    assert (await cli("cards")).returncode == 0
    made = await cli("backup", "out")
    assert made.returncode == 0, made.stderr
    assert ", the configuration;" in made.stdout
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert sorted(entry["kind"] for entry in manifest["files"]) == ["config", "database"]
    copied = (tmp_path / "out" / "config.toml").read_text()
    assert copied == (tmp_path / "var" / "console" / "console.toml").read_text()


async def test_a_backup_into_an_open_folder_is_private_throughout(
    database: Any, tmp_path: Path
) -> None:
    # Issue 33 point 4: the folder stayed 0755 and the files were 0644 until the end.
    store, _board = await board_with_a_bit_of_everything(tmp_path / "live", database)
    await store.close()
    folder = tmp_path / "backup"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    done = await chatbot("backup", folder, "--config", tmp_path / "live" / "bot.toml")
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in folder.rglob("*"):
        expected = 0o700 if path.is_dir() else 0o600
        assert stat.S_IMODE(path.stat().st_mode) == expected, path


async def test_restore_reads_the_schema_step_from_the_database_itself(
    backed_up: tuple[Path, Path],
) -> None:
    # Issue 33 point 5: a database at a newer step with a refitted manifest was restored.
    from chatbot.store.migrations import LATEST

    folder, fresh = backed_up
    database = folder / "board.sqlite3"
    conn = sqlite3.connect(database)
    conn.execute(f"PRAGMA user_version = {LATEST + 1}")
    conn.commit()
    conn.close()
    manifest = json.loads((folder / "manifest.json").read_text())
    data = database.read_bytes()
    for entry in manifest["files"]:
        if entry["path"] == "board.sqlite3":
            entry["size"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))
    done = await chatbot("restore", folder, "--config", fresh)
    assert done.returncode == 1, done.stdout
    assert f"the database says schema step {LATEST + 1}" in done.stderr
    assert not (fresh.parent / "board.sqlite3").exists()


async def test_restore_refuses_while_a_worker_holds_a_lease_on_the_board(
    backed_up: tuple[Path, Path],
) -> None:
    # Issue 33 point 6: --force went ahead while a `chatbot worker` ran on the file.
    from chatbot.store.db import Store

    folder, fresh = backed_up
    target = fresh.parent / "board.sqlite3"
    store = await Store.open(target)
    try:
        async with store.transaction() as db:
            await db.execute(
                "INSERT INTO workers (id, host, process, lanes, started_at, heartbeat_at, "
                "expires_at) VALUES ('w1', 'host-b', '4242:1', '[]', 0, 0, ?)",
                (time.time() + 600,),
            )
    finally:
        await store.close()
    done = await chatbot("restore", folder, "--config", fresh, "--force")
    assert done.returncode == 1, done.stdout
    assert "1 worker running on" in done.stderr and "host-b (4242:1)" in done.stderr


# Nobody's uid: a second local user who must not read the bot's board or config.
OTHER_UID = 65534
_PROBE = (
    'folder="$1"; shift; ls -- "$folder" >/dev/null 2>&1 && echo "listed $folder"; '
    'for path in "$@"; do cat -- "$path" >/dev/null 2>&1 && echo "read $path"; done; true'
)


def _as_another_user(folder: Path, paths: list[Path]) -> list[str]:
    """What a second local user can do in `folder` now: list it, read each of `paths`."""
    done = subprocess.run(
        ["/bin/sh", "-c", _PROBE, "probe", str(folder), *map(str, paths)],
        user=OTHER_UID,
        group=OTHER_UID,
        extra_groups=[],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


@pytest.fixture
def open_folder() -> Any:
    """A folder every user can reach, as a shared /srv/backups would be (pytest's own
    temporary folders are the bot user's alone, which would hide the fault)."""
    import shutil
    import tempfile

    if os.geteuid() != 0:
        pytest.skip("a child of another uid needs root to start it")
    parent = Path(tempfile.mkdtemp(prefix="intent-board-backup-", dir="/var/tmp"))
    parent.chmod(0o755)
    try:
        yield parent
    finally:
        shutil.rmtree(parent)


async def test_another_user_reads_nothing_while_a_backup_is_written(
    open_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 33 point 4, as the attacker saw it: a second local user opened board.sqlite3
    # and config.toml while the backup was under way, before the final chmod.
    from chatbot.app import backup as app_backup
    from chatbot.store import backup as store_backup
    from tests.conftest import Database

    # The probe can read what is open to all: else an empty list below would prove nothing.
    control = open_folder / "control.txt"
    control.write_text("anyone may read this\n")
    control.chmod(0o644)
    assert _as_another_user(open_folder, [control]) == [
        f"listed {open_folder}",
        f"read {control}",
    ]

    store, _ = await board_with_a_bit_of_everything(
        tmp_path / "live", Database(tmp_path / "live" / "board.sqlite3")
    )
    await store.close()
    config_file = tmp_path / "live" / "bot.toml"
    config = parse_config(config_file.read_text(), config_file)
    folder = open_folder / "backup"
    folder.mkdir()
    folder.chmod(0o755)  # an existing empty folder, as the operator made it
    seen: dict[str, list[str]] = {}

    def everything() -> list[Path]:
        return [folder / "board.sqlite3-journal", *sorted(folder.rglob("*"))]

    copy_into = store_backup._backup_into

    def copying(src: sqlite3.Connection, dest: Path) -> None:
        # The database copy's first page is written, its journal open: mid-copy.
        def progress(status: int, remaining: int, total: int) -> None:
            seen.setdefault("copying", _as_another_user(folder, everything()))

        store_backup.create_private(dest)
        out = sqlite3.connect(dest)
        try:
            src.backup(out, pages=1, progress=progress)
        finally:
            out.close()
        copy_into(src, dest)

    real_sha256 = app_backup.sha256

    def summing(path: Path) -> str:
        # Every file is written; the manifest is next, the final chmod after it.
        seen.setdefault("written", _as_another_user(folder, everything()))
        return real_sha256(path)

    monkeypatch.setattr(store_backup, "_backup_into", copying)
    monkeypatch.setattr(app_backup, "sha256", summing)
    umask = os.umask(0o022)  # an operator's usual one; the command sets its own
    try:
        assert app_backup.backup(config, folder) == 0
    finally:
        os.umask(umask)
    assert set(seen) == {"copying", "written"}
    assert seen == {"copying": [], "written": []}
    assert (folder / "config.toml").is_file() and (folder / "board.sqlite3").is_file()


async def test_restore_refuses_while_a_real_worker_runs_on_the_board(
    backed_up: tuple[Path, Path],
) -> None:
    # Issue 33 point 6 with the process itself: `chatbot worker` on the target file.
    from tests.child_output import Output, kill_tree

    folder, fresh = backed_up
    worker = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "chatbot", "worker", "--config", str(fresh)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        await Output(worker).said("worker ready on", 60)
        done = await chatbot("restore", folder, "--config", fresh, "--force")
        assert worker.returncode is None  # it was running all along
    finally:
        kill_tree(worker.pid)
        await worker.wait()
    assert done.returncode == 1, done.stdout
    assert "1 worker running on" in done.stderr
    assert f"({worker.pid}:" in done.stderr  # its pid and start time name it
    titles = sqlite3.connect(fresh.parent / "board.sqlite3").execute("SELECT count(*) FROM cards")
    assert titles.fetchone() == (0,)  # the worker's board was not replaced


async def test_restore_reads_the_step_of_either_engines_database_not_the_manifest(
    engine: str, database: Any, tmp_path: Path
) -> None:
    # Issue 33 point 5 for both engines: pg_restore reads the dump's chatbot_schema row.
    from chatbot.store.migrations import LATEST

    source = tmp_path / "live"
    store, _ = await board_with_a_bit_of_everything(source, database)
    await store.close()
    made = await chatbot("backup", tmp_path / "backup", "--config", source / "bot.toml")
    assert made.returncode == 0, made.stderr
    manifest_file = tmp_path / "backup" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    assert manifest["schema_step"] == LATEST
    manifest["schema_step"] = LATEST - 1  # as an older bot's backup would say
    manifest_file.write_text(json.dumps(manifest))
    done = await chatbot("restore", tmp_path / "backup", "--config", source / "bot.toml", "--force")
    assert done.returncode == 1, done.stdout
    assert f"the database says schema step {LATEST}, the manifest {LATEST - 1}" in done.stderr
