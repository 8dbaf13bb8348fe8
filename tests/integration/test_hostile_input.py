"""What a refusal quotes back over the real Synapse: no control characters, nothing long.

XMPP cannot carry ESC or NUL at all (XML 1.0 has no way to write them), Matrix
JSON can: a refusal that echoed a bad slug put terminal escapes into the room.
"""

from __future__ import annotations

import re
from pathlib import Path

from .bot_process import BotProcess, bot_config, prepare, write_scenario

WITHIN = 30.0
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


async def test_a_bad_slug_with_control_characters_is_refused_without_echoing_them(
    tmp_path: Path, servers, matrix_peer
) -> None:
    prepare(tmp_path, {})
    write_scenario(tmp_path, [])
    bot = await BotProcess(
        tmp_path, bot_config(tmp_path, servers.info, xmpp=False, matrix=True)
    ).start()
    owner = await matrix_peer("owner")
    room = servers.info["matrix"]["rooms"]["public"]["room_id"]
    bot_id = servers.info["matrix"]["accounts"]["bot"]["user_id"]
    try:
        await bot.logged(r"matrix transport online")
        commands = ("/start \x1b[31mevil\x1b[0m\x07", "/log x\x00y", "/status report \x1b[2J\x1b[H")
        for command in commands:
            asked = await owner.say(room, command)
            _, answer = await owner.expect(
                lambda r, ev, asked=asked: (
                    r == room
                    and ev.get("sender") == bot_id
                    and ((ev.get("content") or {}).get("m.relates_to") or {})
                    .get("m.in_reply_to", {})
                    .get("event_id")
                    == asked
                ),
                within=WITHIN,
            )
            content = answer["content"]
            assert not CONTROL.search(content["body"]), repr(content["body"])
            assert not CONTROL.search(content.get("formatted_body", "")), repr(content)
            assert "Usage" in content["body"], content["body"]
    finally:
        await bot.stop()
