"""A bot that ran on nio's default passphrase, restarted with `[matrix] store_key_file`.

The real bot process in an encrypted room with a real E2EE owner on Synapse: before
the restart its crypto store opens with nio's default passphrase; after it, only with
the key, and the bot still reads the owner's next `!status`, sent in the same room
session as before the restart: the room key it decrypts with is the re-pickled one.
"""

from __future__ import annotations

import time
from pathlib import Path

from chatbot.transports.matrix.store_key import pickled_with
from tests.inprocess import in_thread

from .bot_process import ROOT
from .test_e2ee_matrix import (
    INTENT,
    WITHIN,
    bot_device,
    bot_id,
    bot_says,
    e2ee_peer,  # noqa: F401 - the fixture
    replied_to,
    start_encrypted,
)

KEY = "a passphrase the operator's init made"


async def test_a_default_store_is_re_pickled_at_the_restart_and_still_decrypts(
    tmp_path: Path,
    servers,
    e2ee_peer,  # noqa: F811 - the fixture imported above
) -> None:
    t0 = time.monotonic()
    owner = await e2ee_peer("owner")
    bot = bot_id(servers)
    process, room = await start_encrypted(tmp_path, servers, owner, [], {"report": INTENT})
    try:
        first = await owner.say(room, "!status")
        answer = await bot_says(owner, room, bot, r"report")
        assert answer["_decrypted"] and replied_to(answer) == first
        room_session = owner.client.olm.outbound_group_sessions[room].id
        device = bot_device(process, bot)
        store = tmp_path / "matrix-crypto" / f"{bot}_{device}.db"
        assert pickled_with(store, KEY) == "default"

        await process.stop()
        key_file = tmp_path / "secrets" / "matrix-store-key"
        key_file.write_text(KEY + "\n")
        key_file.chmod(0o600)
        text = process.config.read_text()
        process.config.write_text(
            text.replace("[matrix]\n", '[matrix]\nstore_key_file = "secrets/matrix-store-key"\n')
        )
        await process.start()
        await process.logged(r"re-pickled with matrix\.store_key_file", within=WITHIN)
        await process.logged(r"matrix transport online", within=WITHIN)
        assert bot_device(process, bot) == device
        assert pickled_with(store, KEY) == "key"
        assert pickled_with(store, None) == "none", "nio's default passphrase still opens it"

        second = await owner.say(room, "!status")
        # Same room session as before the restart: no new key went to the bot.
        assert owner.client.olm.outbound_group_sessions[room].id == room_session
        answer = await bot_says(owner, room, bot, r"report")
        assert answer["_decrypted"] and replied_to(answer) == second
        assert "cannot read" not in process.log_text()
        assert KEY not in process.log_text()
        print(
            f"\nrestart with a store key, encrypted !status answered: {time.monotonic() - t0:.1f} s"
        )
    finally:
        await process.stop()
    # `chatbot check` reads the store with the key too.
    checked = await in_thread("check", "--config", str(process.config), cwd=ROOT)
    out = checked.stdout + checked.stderr
    assert f"room {room}: joined yes, can post yes, encrypted yes, can decrypt yes" in out, out
    assert "the Matrix crypto store is pickled with matrix.store_key_file" in out
