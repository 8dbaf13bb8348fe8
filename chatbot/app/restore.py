"""`chatbot restore DIR --config F`: a backup back where F says, or nothing changed.

Everything that can refuse is checked before anything is written: the manifest
(every file's size and checksum), F itself, the secret files F names (a backup holds
none), the engine, a bot running on the target, and a target that already holds a
board or keys (only `--force` restores over those). F stays as it is; a backup whose
configuration differs says how to compare them.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from chatbot.app.backup import CONFIG_FILE, FORMAT, MANIFEST, BackupRefused, crypto_store, sha256
from chatbot.config import Config, ConfigError, parse_config
from chatbot.domain.counted import counted
from chatbot.store import StoreError
from chatbot.store import backup as store_backup
from chatbot.store.migrations import LATEST


def _inside(folder: Path, relative: object) -> Path:
    """A manifest's path, only within the backup (a manifest is data, not orders)."""
    if not isinstance(relative, str) or not relative or relative.startswith("/"):
        raise BackupRefused(f"{folder / MANIFEST}: a file path {relative!r} is not a relative path")
    path = folder / relative
    if ".." in Path(relative).parts or not path.resolve().is_relative_to(folder.resolve()):
        raise BackupRefused(f"{folder / MANIFEST}: the file path {relative!r} leaves the backup")
    return path


def verified(folder: Path) -> dict[str, Any]:
    """The manifest, after every file it lists was found whole; BackupRefused otherwise."""
    where = folder / MANIFEST
    try:
        manifest = json.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BackupRefused(
            f"{folder}: no {MANIFEST}: not a backup made by `chatbot backup`"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BackupRefused(f"{where}: unreadable ({error}); the backup is damaged") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupRefused(f"{where}: not a backup format this bot knows (format {FORMAT})")
    files = manifest.get("files")
    if not isinstance(files, list) or not any(
        isinstance(f, dict) and f.get("kind") == "database" for f in files
    ):
        raise BackupRefused(f"{where}: lists no database; the backup is damaged")
    for entry in files:
        if not isinstance(entry, dict):
            raise BackupRefused(f"{where}: a file entry is not an object; the backup is damaged")
        path = _inside(folder, entry.get("path"))
        if not path.is_file():
            raise BackupRefused(f"{path}: missing from the backup; nothing was restored")
        size = path.stat().st_size
        if size != entry.get("size"):
            raise BackupRefused(
                f"{path}: {size} bytes, the manifest says {entry.get('size')}: the backup is "
                "truncated or altered; nothing was restored"
            )
        if sha256(path) != entry.get("sha256"):
            raise BackupRefused(
                f"{path}: its checksum does not match the manifest: the backup is altered "
                "or damaged; nothing was restored"
            )
    step = manifest.get("schema_step")
    if not isinstance(step, int) or step > LATEST:
        raise BackupRefused(
            f"{where}: the backup is at schema step {step}, newer than this bot knows "
            f"({LATEST}); restore it with the bot version that made it "
            f"({manifest.get('bot_version')})"
        )
    return manifest


def _config(file: Path) -> Config:
    """F as the restored bot will read it; its secret files are checked apart, all at once."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{file}: configuration file does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{file}: cannot read configuration: {error}") from None
    return parse_config(text, file, secrets=False)


def _missing_secrets(config: Config) -> list[str]:
    return [f"{key} ({path})" for key, path in config.secret_files().items() if not path.is_file()]


def _files(manifest: dict[str, Any], folder: Path, kind: str) -> list[Path]:
    return [folder / f["path"] for f in manifest["files"] if f["kind"] == kind]


def _check_step(database: Path, manifest: dict[str, Any]) -> None:
    """The schema step the database itself says, not only its manifest (issue 33)."""
    if manifest.get("engine") == "sqlite":
        step = store_backup.sqlite_step(database)
    else:
        step = store_backup.pg_dump_step(database)
    if step != manifest.get("schema_step") or step > LATEST:
        raise BackupRefused(
            f"{database}: the database says schema step {step}, the manifest "
            f"{manifest.get('schema_step')} (this bot knows up to {LATEST}): the backup was "
            "altered; nothing was restored"
        )


def _check_target(config: Config, manifest: dict[str, Any], folder: Path, force: bool) -> None:
    sqlite = config.bot.sqlite_file
    engine = "sqlite" if sqlite is not None else "postgresql"
    if manifest.get("engine") != engine:
        raise BackupRefused(
            f"the backup is of a {manifest.get('engine')} database, {config.source} names a "
            f"{engine} one (bot.database): restore into a configuration of the same engine"
        )
    if sqlite is not None:
        rows, name = store_backup.sqlite_holds(sqlite), str(sqlite)
        working = store_backup.sqlite_workers(sqlite)
    else:
        url, password = str(config.bot.database), config.bot.database_password_file
        rows, name = store_backup.postgres_holds(url, password), store_backup.redacted(url)
        working = store_backup.postgres_workers(url, password)
    if rows and not force:
        raise BackupRefused(
            f"the database {name} is not empty ({rows} rows); restoring replaces it: "
            "add --force to restore over it"
        )
    if working:
        # Even with --force: a worker would go on with the board it had (issue 33).
        raise BackupRefused(
            f"{counted(len(working), 'worker')} running on {name}: {', '.join(working)}; "
            "stop every bot "
            "and `chatbot worker` on it, then restore"
        )
    crypto = crypto_store(config)
    ours = _files(manifest, folder, "crypto_store")
    if crypto is not None and ours and crypto.is_dir() and any(crypto.iterdir()) and not force:
        raise BackupRefused(
            f"the Matrix crypto store {crypto} already holds files; restoring replaces the "
            "bot's keys there: add --force to restore over it"
        )


def _restore_crypto(files: list[Path], folder: Path) -> None:
    """Each file beside its final name first, then renamed over it: a file is either
    the old one or the whole new one."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for source in files:
        target = folder / source.name
        for side in ("-wal", "-shm", "-journal"):
            Path(str(target) + side).unlink(missing_ok=True)
        partial = folder / f".{source.name}.restoring"
        shutil.copyfile(source, partial)
        partial.chmod(0o600)
        os.replace(partial, target)


def restore(folder: Path, config_file: Path, *, force: bool) -> int:
    try:
        manifest = verified(folder)
        config = _config(config_file)
        missing = _missing_secrets(config)
        if missing:
            raise BackupRefused(
                f"{config_file} names secret files that are missing (a backup holds no "
                f"secrets): {', '.join(missing)}; put them in place, then restore again"
            )
        # The backup is read whole before the target is looked at.
        database = _files(manifest, folder, "database")[0]
        _check_step(database, manifest)
        _check_target(config, manifest, folder, force)
        if config.bot.sqlite_file is not None:
            store_backup.restore_sqlite(database, config.bot.sqlite_file)
        else:
            store_backup.restore_postgres(
                database,
                str(config.bot.database),
                config.bot.database_password_file,
                manifest.get("database_schema") or "public",
                force=force,
            )
    except ConfigError as error:
        print(f"chatbot: {error}", file=sys.stderr)
        return 2
    except (BackupRefused, StoreError) as error:
        print(f"chatbot: restore refused: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"chatbot: restore failed: {error}", file=sys.stderr)
        return 1
    crypto, keys = crypto_store(config), _files(manifest, folder, "crypto_store")
    if keys and crypto is not None:
        try:
            _restore_crypto(keys, crypto)
        except OSError as error:
            print(f"chatbot: the board is restored, the crypto store not: {error}", file=sys.stderr)
            return 1
    print(
        f"restored {config.bot.database} (schema step {manifest['schema_step']}, made "
        f"{manifest.get('created_at')} by {manifest.get('bot_version')})"
        + (f" and the Matrix crypto store into {crypto}" if keys and crypto else "")
    )
    if keys and crypto is None:
        print(f"{config_file} has no [matrix] section: the crypto store was not restored")
    _config_hint(folder, config_file, manifest, config)
    return 0


def _config_hint(folder: Path, config_file: Path, manifest: dict[str, Any], config: Config) -> None:
    named = config.secret_files()
    gone = [
        str(entry.get("key"))
        for entry in manifest.get("secret_files") or []
        if isinstance(entry, dict) and entry.get("key") not in named
    ]
    if gone:
        print(
            f"the backup's configuration named secret files {config_file} does not: "
            + ", ".join(gone)
        )
    saved = folder / CONFIG_FILE
    if saved.is_file() and saved.read_bytes() != config_file.read_bytes():
        print(
            f"the backup's configuration differs from {config_file} (kept as it is): "
            f"diff -u {saved} {config_file}"
        )
