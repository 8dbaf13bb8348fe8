"""The long-running bot: the worker plus, where configured, chat transports."""

from __future__ import annotations

import asyncio
import logging

from chatbot.app import Running

log = logging.getLogger(__name__)


async def serve(bot: Running, stop: asyncio.Event) -> None:
    log.info("serving; stop with Ctrl-C")
    await bot.worker.run(stop=stop)
