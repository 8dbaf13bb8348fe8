"""A real headless Chromium (Debian's), driven by Selenium through Debian's chromedriver.

The board's server runs in the test's event loop, so every call into the browser
(which blocks until the page answers) runs in a thread: `await browser.open(url)`.
Waiting is done in the page by a MutationObserver, never by polling or sleeping.
"""

from __future__ import annotations

import asyncio
import struct
import tempfile
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from tests.web.install import CHROMEDRIVER, CHROMIUM, ensure_installed

# The flags measured to work on this machine (no network beyond loopback, root).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}

# Resolves once the card is in the column, recording when (ms since the epoch).
WATCH_CARD = """
const [slug, group] = arguments;
const there = () => {
  const card = document.getElementById('card-' + slug);
  return card !== null && card.parentElement.id === 'col-' + group;
};
window.__seen = new Promise(resolve => {
  if (there()) return resolve(Date.now());
  const watcher = new MutationObserver(() => {
    if (there()) { watcher.disconnect(); resolve(Date.now()); }
  });
  watcher.observe(document.getElementById('main').parentElement, {childList: true, subtree: true});
});
"""
# Resolves once #main holds the text.
WATCH_TEXT = """
const [text] = arguments;
const there = () => (document.getElementById('main') || document.body).textContent.includes(text);
window.__seen = new Promise(resolve => {
  if (there()) return resolve(Date.now());
  const watcher = new MutationObserver(() => {
    if (there()) { watcher.disconnect(); resolve(Date.now()); }
  });
  watcher.observe(document.body, {childList: true, subtree: true, characterData: true});
});
"""
# Resolves once the live indicator says the event stream is open.
WATCH_LIVE = """
const live = document.getElementById('live');
window.__seen = new Promise(resolve => {
  if (live.classList.contains('on')) return resolve(Date.now());
  const watcher = new MutationObserver(() => {
    if (live.classList.contains('on')) { watcher.disconnect(); resolve(Date.now()); }
  });
  watcher.observe(live, {attributes: true});
});
"""
SEEN = "const done = arguments[arguments.length - 1]; window.__seen.then(done);"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


class Browser:
    def __init__(self, *, javascript: bool = True):
        ensure_installed()
        self.profile = tempfile.TemporaryDirectory(prefix="board-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={self.profile.name}")
        options.add_argument("--window-size=1400,900")
        if not javascript:
            options.add_experimental_option(
                "prefs", {"profile.managed_default_content_settings.javascript": 2}
            )
        self.driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
        self.driver.set_script_timeout(15)

    def close(self) -> None:
        self.driver.quit()
        self.profile.cleanup()

    def reset(self) -> None:
        """A fresh visitor: no cookies, desktop size, a blank page."""
        self.driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        self.driver.get("about:blank")
        self.driver.get_log("browser")  # reading empties it: this visitor starts clean

    # --- blocking calls, run in a thread ---------------------------------------------

    async def _call(self, function, *args) -> Any:
        return await asyncio.to_thread(function, *args)

    async def open(self, url: str) -> None:
        await self._call(self.driver.get, url)

    async def js(self, script: str, *args: Any) -> Any:
        return await self._call(self.driver.execute_script, script, *args)

    async def wait_js(self, script: str, *args: Any) -> Any:
        return await self._call(self.driver.execute_async_script, script, *args)

    async def text(self, selector: str = "body") -> str:
        return await self.js("return document.querySelector(arguments[0]).textContent", selector)

    async def source(self) -> str:
        return await self._call(lambda: self.driver.page_source)

    async def phone(self) -> None:
        await self._call(self.driver.execute_cdp_cmd, "Emulation.setDeviceMetricsOverride", PHONE)

    async def time_zone(self, zone: str) -> None:
        """The page's time zone, as the TZ variable sets it for a whole Chromium ("": the
        machine's again)."""
        command = "Emulation.setTimezoneOverride"
        await self._call(self.driver.execute_cdp_cmd, command, {"timezoneId": zone})

    async def screenshot(self, path: Path) -> bytes:
        data = await self._call(self.driver.get_screenshot_as_png)
        path.write_bytes(data)
        return data

    async def cookies(self) -> list[dict]:
        return await self._call(self.driver.get_cookies)

    async def console_errors(self) -> list[dict]:
        logs = await self._call(self.driver.get_log, "browser")
        return [entry for entry in logs if entry["level"] == "SEVERE"]
