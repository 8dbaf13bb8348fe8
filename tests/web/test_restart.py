"""The whole bot with the web board on: serve() wires it, and an open page survives a restart.

The bot runs as `chatbot run` runs it (running_bot + serve) with the console as its
chat and the scripted demo agents; the browser keeps one page open across the
restart and must follow the board without being reloaded.
"""

from __future__ import annotations

import secrets
import socket
import time
from pathlib import Path

from chatbot.app import demo
from chatbot.config import WebSection
from tests.demo.serving import said, serving
from tests.web.browser import SEEN, WATCH_CARD, WATCH_LIVE, Browser

# Resolves once the live indicator says the stream is gone.
WATCH_OFFLINE = """
const live = document.getElementById('live');
window.__seen = new Promise(resolve => {
  if (!live.classList.contains('on')) return resolve(Date.now());
  const watcher = new MutationObserver(() => {
    if (!live.classList.contains('on')) { watcher.disconnect(); resolve(Date.now()); }
  });
  watcher.observe(live, {attributes: true});
});
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def web_config(tmp_path: Path, port: int, token: str):
    """The console demo with its state in a temporary folder, and a [web] section."""
    (tmp_path / "web-token").write_text(token + "\n")
    web = WebSection(listen=f"127.0.0.1:{port}", token_file=tmp_path / "web-token")
    return demo.config(tmp_path).model_copy(update={"web": web})


async def test_an_open_page_follows_the_pipeline_and_reconnects_after_a_restart(
    browser: Browser, tmp_path: Path
) -> None:
    port, token = free_port(), secrets.token_urlsafe(24)
    config = web_config(tmp_path, port, token)
    url = f"http://127.0.0.1:{port}/"
    async with serving(config) as (console, _):
        await browser.open(f"{url}?token={token}")
        await browser.js(WATCH_LIVE)
        await browser.wait_js(SEEN)
        await browser.js("window.__samePage = true;")
        # The pipeline moves the card (operator, builder, reviewer); the page follows it
        # to "Waiting for you": approved, it waits for the owner's /deploy.
        await browser.js(WATCH_CARD, "hello-endpoint", "waiting")
        await console.push("/start hello-endpoint")
        await said(console, r"review approve")
        await browser.wait_js(SEEN)
        await browser.js(WATCH_OFFLINE)
    await browser.wait_js(SEEN)  # the bot stopped: the page says it is reconnecting
    assert "reconnecting" in await browser.text("#live")

    async with serving(config) as (console, _):
        back = time.time()
        await browser.js(WATCH_LIVE)
        reconnected = await browser.wait_js(SEEN) / 1000  # back without a reload
        print(f"page live again {max(0.0, reconnected - back) * 1000:.0f} ms after the restart")
        await browser.console_errors()  # the refused connections while it was away
        await browser.js(WATCH_CARD, "readme-badges", "archived")
        await console.push("/archive readme-badges")
        await browser.wait_js(SEEN)
        assert await browser.js("return window.__samePage === true")
        assert await browser.js("return performance.getEntriesByType('navigation').length") == 1
        # The reviewer's report, written by the pipeline, rendered on the card's page.
        await browser.open(f"{url}card/hello-endpoint")
        review = await browser.js(
            "const md = document.querySelector('#reviews .md');"
            "return {head: md.querySelector('h1').textContent, text: md.textContent}"
        )
        assert review["head"] == "Review"
        assert "Scripted demo reviewer" in review["text"]
        runs = await browser.text("#runs")
        assert "reviewer" in runs and "builder" in runs and "5,200 / 1,200 / 800" in runs
        assert await browser.console_errors() == []
