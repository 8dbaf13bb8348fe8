"""The bot served with a console as its chat, as `scripts/run` serves the demo: what the
tests that type at the running bot share."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from chatbot.app.serve import serve
from chatbot.app.startup import running_bot
from chatbot.transports.console import ConsoleSettings, ConsoleTransport


@asynccontextmanager
async def serving(config: Any, **running: Any) -> AsyncIterator[tuple[ConsoleTransport, Any]]:
    """The bot of `config` serving, its console online: the console and the running bot.
    Leaving stops the bot and waits for it."""
    console = ConsoleTransport(ConsoleSettings(owner="owner@localhost", bot_name="board"))
    stop = asyncio.Event()
    async with running_bot(config, **running) as bot:
        served = asyncio.create_task(serve(bot, stop, transports={"console": console}))
        try:
            await asyncio.wait_for(console.wait_online(), 10)
            yield console, bot
        finally:
            stop.set()
            await served


async def said(console: ConsoleTransport, pattern: str, within: float = 30.0):
    """The console's next line that matches `pattern` (the lines before it are passed).
    Not in time: the failure names the pattern and the last lines the console printed."""
    regex = re.compile(pattern, re.S)
    passed: list[str] = []
    try:
        async with asyncio.timeout(within):
            while True:
                line = await console.pop(within)
                if regex.search(line.text):
                    return line
                passed.append(f"#{line.number} {line.text[:300]}")
    except TimeoutError:
        seen = "\n".join(passed[-10:]) or "(nothing)"
        raise AssertionError(
            f"no line matched {pattern!r} in {within} s; last seen:\n{seen}"
        ) from None
