"""The console demo's own web board, as a new user meets it: `scripts/run` prints a
sign-in link at start, and that link opens the board in a real Chromium, signed in as
the person at the terminal, who then acts on a card from the page.

With SCREENSHOTS=1 (scripts/screenshots) the pages are saved for the documentation, so
its pictures are the board as it is, never drawn by hand."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from tests.child_output import Output, kill_tree
from tests.realservers.proc import free_port
from tests.web.browser import Browser
from tests.web.test_owners_browser import click

ROOT = Path(__file__).resolve().parents[2]
PICTURES = ROOT / "docs" / "images"
LINK = re.compile(r"web board: (http://127\.0\.0\.1:\d+/signin/[A-Za-z0-9_-]+) ")


def demo_env() -> dict[str, str]:
    """The environment `chatbot run` gets here: the demo, never a configuration of ours."""
    return {k: v for k, v in os.environ.items() if k not in ("CHATBOT_CONFIG", "PYTHONPATH")}


async def start_demo(cwd: Path, env: dict[str, str], **pipes: int) -> asyncio.subprocess.Process:
    """`chatbot run` with no configuration: the console demo, its input a pipe."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "chatbot",
        "run",
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        **pipes,
    )


async def picture(browser: Browser, name: str) -> None:
    if os.environ.get("SCREENSHOTS") == "1":
        PICTURES.mkdir(parents=True, exist_ok=True)
        await browser.screenshot(PICTURES / name)


async def test_the_demos_sign_in_link_opens_its_board(browser: Browser, tmp_path: Path) -> None:
    port = free_port()
    env = demo_env() | {"INTENT_BOARD_DEMO_WEB": f"127.0.0.1:{port}"}
    bot = await start_demo(
        tmp_path, env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
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


def bubbles(transcript: str) -> list[tuple[str, str]]:
    """The console's numbered lines as (who, text) messages; a message's further lines
    belong to it. The session's own lines (no number) are left out."""
    messages: list[tuple[str, str]] = []
    for line in transcript.splitlines():
        found = re.match(r"\[#\d+\](?: \((?:re|edit of) #\d+\))? ([^:]+): ?(.*)", line)
        if found:
            messages.append((found.group(1), found.group(2)))
        elif messages:
            who, text = messages[-1]
            messages[-1] = (who, f"{text}\n{line}")
    return messages


def chat_page(messages: list[tuple[str, str]]) -> str:
    from html import escape

    rows = "".join(
        f'<div class="m {"me" if who.startswith("owner") else "bot"}">'
        f"<b>{escape(who)}</b><pre>{escape(text)}</pre></div>"
        for who, text in messages
    )
    style = (
        "body{font:15px system-ui;background:#eef1f5;max-width:720px;margin:auto}"
        ".m{margin:8px;padding:8px 12px;border-radius:12px;max-width:80%}"
        ".me{background:#d7f1d0;margin-left:auto}.bot{background:#fff}"
        "pre{white-space:pre-wrap;font:inherit;margin:4px 0 0}b{font-size:12px;color:#555}"
    )
    return f"<!doctype html><meta charset=utf-8><style>{style}</style>{rows}"


async def test_the_walkthrough_as_a_chat_shows_every_message(
    browser: Browser, tmp_path: Path
) -> None:
    """The README's walkthrough, as the demo prints it, shown as a chat in Chromium:
    the documentation's picture of a chat is the bot's own words."""
    from tests.demo.test_readme_walkthrough import TYPED, readme_transcript

    typed = [found.group(1) for line in readme_transcript() if (found := TYPED.match(line))]
    done = await start_demo(tmp_path, demo_env(), stdout=asyncio.subprocess.PIPE)
    out, _ = await asyncio.wait_for(
        done.communicate("".join(f"{line}\n" for line in typed).encode()), 300
    )
    messages = bubbles(out.decode())
    assert [text for who, text in messages if who == "owner@localhost"] == typed
    page = tmp_path / "chat.html"
    page.write_text(chat_page(messages), encoding="utf-8")
    await browser.open(page.as_uri())
    shown = await browser.js("return document.querySelectorAll('.m').length")
    assert shown == len(messages) and shown > len(typed)
    assert "review approve" in await browser.text("body")
    await picture(browser, "chat.png")
