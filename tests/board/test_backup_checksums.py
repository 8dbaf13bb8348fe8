"""`chatbot restore` checks every file a backup lists, not only the database: one byte
changed in the configuration or in the Matrix crypto store (the size kept, so only the
checksum can tell) refuses the restore and changes nothing (issue 39 point 9).

In-process (`take` and `restore` themselves): the commands' process boundary is tested
in tests/board/test_backup.py."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from chatbot.app.backup import take
from chatbot.app.restore import restore
from chatbot.config import parse_config
from chatbot.store import Store
from tests.pipeline.harness import BIN, CONFIG

MATRIX = (
    '[matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@bot:example.org"\n'
    'password_file = "matrix-crypto/store-key"\ncrypto_store = "matrix-crypto"\n'
)


@pytest.fixture
async def backup(tmp_path: Path) -> Path:
    """A SQLite board backed up with its configuration and a crypto store of two files."""
    live = tmp_path / "live"
    crypto = live / "matrix-crypto"
    crypto.mkdir(parents=True)
    (crypto / "store-key").write_text("a passphrase\n")
    with sqlite3.connect(crypto / "@bot:example.org_DEVICE.db") as nio:
        nio.execute("CREATE TABLE olm_sessions (session TEXT)")
        nio.execute("INSERT INTO olm_sessions VALUES ('pickled session')")
    (crypto / "device.json").write_text('{"device_id": "DEVICE"}\n')
    text = CONFIG.format(bin=BIN) + MATRIX
    (live / "bot.toml").write_text(text)
    config = parse_config(text, live / "bot.toml", secrets=False)
    store = await Store.open(config.bot.database)
    await store.close()
    folder = tmp_path / "backup"
    folder.mkdir()
    take(config, folder)
    return folder


def listed(folder: Path) -> dict[str, str]:
    manifest = json.loads((folder / "manifest.json").read_text())
    return {entry["path"]: entry["kind"] for entry in manifest["files"]}


def test_the_backup_lists_each_kind_of_file(backup: Path) -> None:
    kinds = listed(backup)
    assert sorted(set(kinds.values())) == ["config", "crypto_store", "database"]
    assert (
        "crypto-store/device.json" in kinds and "crypto-store/@bot:example.org_DEVICE.db" in kinds
    )


@pytest.mark.parametrize(
    "relative",
    [
        "board.sqlite3",
        "config.toml",
        "crypto-store/device.json",
        "crypto-store/@bot:example.org_DEVICE.db",
    ],
)
def test_one_byte_changed_in_any_file_refuses_the_restore(
    backup: Path, tmp_path: Path, relative: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert relative in listed(backup)
    damaged = backup / relative
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 1
    damaged.write_bytes(bytes(data))
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "bot.toml").write_text(CONFIG.format(bin=BIN))
    assert restore(backup, fresh / "bot.toml", force=False) == 1
    said = capsys.readouterr().err
    assert f"{damaged}: its checksum does not match the manifest" in said
    assert "nothing was restored" in said and len(said.strip().splitlines()) == 1
    assert sorted(p.name for p in fresh.iterdir()) == ["bot.toml"]
