"""`chatbot backup DIR`: the board, the Matrix crypto store, the configuration, a manifest.

Run beside the bot: the database's part is one moment of it (chatbot/store/backup.py),
and the crypto store is copied while that moment is held, so the store is never
older than the board that goes with it. Secrets are not copied: the manifest names
the secret files the configuration names, and `chatbot restore` checks they exist.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from chatbot.app.wiring import servers, settings_for
from chatbot.config import Config
from chatbot.domain.counted import counted
from chatbot.store import StoreError
from chatbot.store import backup as store_backup

MANIFEST = "manifest.json"
FORMAT = 1
SQLITE_FILE = "board.sqlite3"
PG_DUMP = "board.pgdump"
CRYPTO_DIR = "crypto-store"
CONFIG_FILE = "config.toml"
_SQLITE_MAGIC = b"SQLite format 3\x00"
# A crypto store's SQLite side files: the backup API has read what they hold.
_SIDE_FILES = ("-wal", "-shm", "-journal")


class BackupRefused(Exception):
    """One line for the operator: what is wrong and what to do; nothing was changed."""


def bot_version() -> str:
    try:
        return metadata.version("intent-board-chatbot")
    except metadata.PackageNotFoundError:
        return "unknown"


def _no_secret(path: Path) -> str:
    return ""


def crypto_store(config: Config) -> Path | None:
    """The folder of the Matrix crypto store the configuration points at (None: none)."""
    for network, _ in servers(config):
        settings = settings_for(config, network, secret=_no_secret)
        # getattr: only Matrix's settings have a crypto store; the other networks keep none
        folder = getattr(settings, "crypto_store", None)
        if folder:
            return Path(folder)
    return None


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _unusable(folder: Path) -> str | None:
    if folder.is_symlink() and not folder.exists():
        return f"{folder} is a link to nothing; name a new or empty folder for the backup"
    if folder.exists() and not folder.is_dir():
        return f"{folder} is a file; name a new or empty folder for the backup"
    if folder.is_dir() and any(folder.iterdir()):
        return (
            f"{folder} is not empty; name a new or empty folder for the backup "
            "(nothing was written)"
        )
    return None


def _copy_crypto(source: Path, dest: Path, secrets: set[Path]) -> list[Path]:
    """Every file of the store as it is now: SQLite files through the backup API."""
    dest.mkdir(mode=0o700)
    copied = []
    for path in sorted(source.iterdir()):
        if not path.is_file() or path.name.endswith(_SIDE_FILES) or path.resolve() in secrets:
            continue
        target = dest / path.name
        with open(path, "rb") as handle:
            is_sqlite = handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
        if is_sqlite:
            store_backup.copy_sqlite(path, target)
        else:
            shutil.copyfile(path, target)
        target.chmod(0o600)
        copied.append(target)
    return copied


def take(config: Config, folder: Path) -> dict[str, Any]:
    """Write the backup into the empty `folder`; returns the manifest written last."""
    crypto = crypto_store(config)
    secrets = {path.resolve() for path in config.secret_files().values()}
    kinds: dict[Path, str] = {}

    def during() -> None:
        if crypto is not None and crypto.is_dir():
            for path in _copy_crypto(crypto, folder / CRYPTO_DIR, secrets):
                kinds[path] = "crypto_store"

    sqlite = config.bot.sqlite_file
    if sqlite is not None:
        database = folder / SQLITE_FILE
        snapshot = store_backup.snapshot_sqlite(sqlite, database, during)
        engine = "sqlite"
    else:
        database = folder / PG_DUMP
        snapshot = store_backup.snapshot_postgres(
            str(config.bot.database), config.bot.database_password_file, database, during
        )
        engine = "postgresql"
    kinds[database] = "database"
    if config.source.is_file():
        shutil.copyfile(config.source, folder / CONFIG_FILE)
        kinds[folder / CONFIG_FILE] = "config"
    base = config.source.parent
    manifest = {
        "format": FORMAT,
        "bot_version": bot_version(),
        "schema_step": snapshot.schema_step,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "engine": engine,
        "database_schema": snapshot.schema,
        "files": [
            {
                "path": path.relative_to(folder).as_posix(),
                "kind": kind,
                "size": path.stat().st_size,
                "sha256": sha256(path),
            }
            for path, kind in sorted(kinds.items())
        ],
        # Named, never copied: restore checks that they are in place.
        "secret_files": [
            {"key": key, "path": _shown(path, base)}
            for key, path in sorted(config.secret_files().items())
        ],
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    # The board and the bot's keys: for the bot's user alone, whatever the umask.
    for path in [*kinds, folder / MANIFEST]:
        path.chmod(0o600)
    return manifest


def _shown(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


def backup(config: Config, folder: Path) -> int:
    problem = _unusable(folder)
    if problem:
        print(f"chatbot: {problem}", file=sys.stderr)
        return 1
    made = not folder.exists()
    # Everything this command makes is the bot user's alone from its first byte (issue
    # 33): the folder, the database copy and its journal, pg_dump's file, the config.
    os.umask(0o077)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)
    except OSError as error:
        print(f"chatbot: {folder}: {error.strerror or error}", file=sys.stderr)
        return 1
    try:
        manifest = take(config, folder)
    except (StoreError, OSError) as error:
        # A half backup must not look like one: what was written goes again.
        for entry in folder.iterdir():
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        if made:
            folder.rmdir()
        print(f"chatbot: backup failed, nothing kept: {error}", file=sys.stderr)
        return 1
    total = sum(entry["size"] for entry in manifest["files"])
    crypto = sum(1 for entry in manifest["files"] if entry["kind"] == "crypto_store")
    # The embedded demo has no file to copy: say only what is in the folder.
    has_config = any(entry["kind"] == "config" for entry in manifest["files"])
    print(
        f"backed up to {folder}: {manifest['engine']} database at schema step "
        f"{manifest['schema_step']}, {counted(crypto, 'crypto store file')}"
        f"{', the configuration' if has_config else ', no configuration file (none was read)'}; "
        f"{total} bytes; secrets are not in it"
    )
    return 0
