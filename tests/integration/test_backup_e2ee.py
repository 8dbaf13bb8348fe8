"""Back up a running bot in an encrypted Matrix room, lose its database and crypto store,
restore them, and the bot reads the room again: the restored Olm and Megolm sessions
work (real bot process, real Synapse, an E2EE nio client as the owner)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.inprocess import in_thread

from .bot_process import ROOT
from .test_e2ee_matrix import (  # noqa: F401 - e2ee_peer is a fixture
    INTENT,
    bot_device,
    bot_id,
    bot_says,
    e2ee_peer,
    replied_to,
    start_encrypted,
)


async def chatbot(*args: str | Path) -> tuple[int, str]:
    done = await in_thread(*args, cwd=ROOT)
    return done.returncode, done.stdout + done.stderr


async def test_a_restored_bot_still_reads_and_answers_the_encrypted_room(
    tmp_path: Path,
    servers,
    e2ee_peer,  # noqa: F811 - the fixture, imported above
) -> None:
    owner = await e2ee_peer("owner")
    bot = bot_id(servers)
    process, room = await start_encrypted(tmp_path, servers, owner, [], {"report": INTENT})
    config = tmp_path / "bot.toml"
    try:
        first = await owner.say(room, "/status")
        answer = await bot_says(owner, room, bot, r"report")
        assert answer["_decrypted"] and replied_to(answer) == first
        device = bot_device(process, bot)

        # While the bot runs.
        code, said = await chatbot("backup", tmp_path / "backup", "--config", config)
        assert code == 0, said
        manifest = json.loads((tmp_path / "backup" / "manifest.json").read_text())
        kept = {f["path"] for f in manifest["files"] if f["kind"] == "crypto_store"}
        assert f"crypto-store/{bot}_{device}.db" in kept
        assert {"key": "matrix.password_file", "path": "secrets/matrix"} in (
            manifest["secret_files"]
        )
        await process.stop()

        # Everything the bot keeps is gone; the configuration and its secrets are not.
        for path in tmp_path.glob("board.sqlite3*"):
            path.unlink()
        shutil.rmtree(tmp_path / "matrix-crypto")
        code, said = await chatbot("restore", tmp_path / "backup", "--config", config)
        assert code == 0, said

        await process.start()
        await process.logged(r"matrix transport online", within=30)
        assert bot_device(process, bot) == device, "the restored bot logged in as a new device"
        again = await owner.say(room, "/status")
        answer = await bot_says(owner, room, bot, r"report")
        assert answer["_decrypted"] and replied_to(answer) == again
        assert "cannot read" not in process.log_text()
    finally:
        await process.stop()
