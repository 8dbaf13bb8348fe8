"""`Type=notify`: the bot tells systemd it is ready once its chat transports are up."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from .bot_process import BotProcess, bot_config, prepare


async def test_ready_is_sent_once_the_transports_are_online(tmp_path: Path, servers) -> None:
    prepare(tmp_path, {})
    config = bot_config(tmp_path, servers.info, xmpp=True, matrix=True)
    # What systemd listens on: a datagram socket named in NOTIFY_SOCKET.
    address = str(tmp_path / "notify.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(address)
    listener.setblocking(False)
    bot = BotProcess(tmp_path, config, env={"NOTIFY_SOCKET": address})
    await bot.start()
    try:
        loop = asyncio.get_running_loop()
        message = (await asyncio.wait_for(loop.sock_recv(listener, 4096), 60)).decode()
        assert message.startswith("READY=1\n"), message
        assert "STATUS=serving on xmpp, matrix" in message
        assert "still connecting" not in message
        # By then both transports had said so in the bot's own log.
        log = bot.log_text()
        assert "xmpp transport online" in log and "matrix transport online" in log
    finally:
        listener.close()
        await bot.stop()
