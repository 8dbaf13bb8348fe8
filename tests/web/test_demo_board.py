"""The console demo's own web board, as a new user meets it: `scripts/run` prints a
sign-in link at start, and that link opens the board in a real Chromium, signed in as
the person at the terminal, who then acts on a card from the page.

With SCREENSHOTS=1 (scripts/screenshots) the pages are saved for the documentation, so
its pictures are the board as it is, never drawn by hand."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sys
from pathlib import Path

from tests.child_output import Output, kill_tree
from tests.web.browser import Browser
from tests.web.test_owners_browser import click

ROOT = Path(__file__).resolve().parents[2]
PICTURES = ROOT / "docs" / "images"
LINK = re.compile(r"web board: (http://127\.0\.0\.1:\d+/signin/[A-Za-z0-9_-]+) ")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def picture(browser: Browser, name: str) -> None:
    if os.environ.get("SCREENSHOTS") == "1":
        PICTURES.mkdir(parents=True, exist_ok=True)
        await browser.screenshot(PICTURES / name)


async def test_the_demos_sign_in_link_opens_its_board(browser: Browser, tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("CHATBOT_CONFIG", "PYTHONPATH")}
    env["INTENT_BOARD_DEMO_WEB"] = f"127.0.0.1:{port}"
    bot = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "chatbot",
        "run",
        cwd=tmp_path,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output = Output(bot)
    try:
        line = await output.said(r"web board: ", 60)
        found = LINK.search(line)
        assert found, line
        assert "once, within 10 minutes" in line
        await browser.open(found.group(1))
        assert "as console:owner@localhost?" in await browser.text("#signin")
        await click(browser, "#signin button")
        assert browser.driver.current_url == f"http://127.0.0.1:{port}/"
        board = await browser.text("body")
        assert "slow-demo" in board and "hello-endpoint" in board
        await picture(browser, "board.png")
        # Signed in, the page acts: the same start as /start in the console.
        await browser.open(f"http://127.0.0.1:{port}/card/hello-endpoint")
        await click(browser, "form.act input[value=start] ~ button")
        assert bot.stdin is not None
        await output.said(r"hello-endpoint: review approve", 60)
        await browser.open(f"http://127.0.0.1:{port}/card/hello-endpoint")
        await picture(browser, "card.png")
        # The link was for one use: a second visit is told so.
        await browser.open(found.group(1))
        assert "used" in (await browser.text("body")).lower()
        bot.stdin.close()
        assert await asyncio.wait_for(bot.wait(), 60) == 0
    finally:
        if bot.returncode is None:
            kill_tree(bot.pid)
            await bot.wait()
