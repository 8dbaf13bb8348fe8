"""The whole bot (console chat, worker, outbox) while the database's disk fills up.

The console demo runs with its database on a small real file system. When it
fills: reads are answered, changes are refused with the reason, the owner is
told once, nothing logs a traceback; when space is back, the bot says so and the
refused command works when sent again.
"""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import pytest

from chatbot.transports.console import ConsoleTransport
from tests.demo.serving import said, serving
from tests.demo.test_console_demo import demo_config
from tests.fulldisk.disk import empty_wal, small_disk


async def seen(console: ConsoleTransport, *patterns: str, within: float = 30.0) -> list:
    """The first line matching each pattern, whatever their order."""
    found: dict[str, object] = {}
    async with asyncio.timeout(within):
        while len(found) < len(patterns):
            line = await console.pop(within)
            for pattern in patterns:
                if pattern not in found and re.search(pattern, line.text, re.S):
                    found[pattern] = line
    return [found[p] for p in patterns]


def _on(disk_path: Path, config):
    bot = config.bot.model_copy(update={"database": disk_path / "board.sqlite3"})
    return config.model_copy(update={"bot": bot})


async def test_a_full_disk_refuses_changes_answers_reads_and_recovers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with small_disk(tmp_path) as disk:
        config = _on(disk.path, demo_config(tmp_path / "state"))
        async with serving(config) as (console, bot):
            bot.store.health.probe_first_s = 0.05
            try:
                await console.push("/status hello-endpoint")
                await said(console, r"phase planned")

                await asyncio.to_thread(empty_wal, disk.path / "board.sqlite3")
                disk.fill()
                await console.push("/start hello-endpoint")
                # The refusal, and (in either order) the notice that says it unasked.
                told = await seen(console, r"Not done", r"cannot save anything right now")
                assert "disk holding it is full" in told[0].text
                assert "/status" in told[0].text  # what still works
                # Looking still works, and answers come although the outbox cannot
                # take a row.
                await console.push("/status hello-endpoint")
                await said(console, r"phase planned")
                assert (await bot.board.reads.card("hello-endpoint")).phase.value == "planned"

                disk.free()
                await said(console, r"saves again")
                await console.push("/start hello-endpoint")
                await said(console, r"planned → operator running")
            finally:
                disk.free()
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert not tracebacks, [r.getMessage() for r in tracebacks]
