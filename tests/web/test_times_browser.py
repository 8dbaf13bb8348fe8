"""Times on the board's pages (issue 35): the server writes each moment in UTC and says so;
in the browser static/times.js shows it in the reader's time zone, the UTC text on hover."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from tests.web.browser import Browser
from tests.web.test_http import fetch

# Half an hour off UTC all year (no summer time): minutes show whether it was converted.
ZONE = "Asia/Kolkata"
TIMES = """
return Array.from(document.querySelectorAll('#runs time, #history time'),
  t => ({datetime: t.getAttribute('datetime'), text: t.textContent, title: t.title}));
"""


async def test_the_server_writes_utc_and_says_so(site) -> None:
    _, _, page = await fetch(site, "card/reviewed", headers=site.headers())
    found = re.findall(r'<time datetime="([^"]+)">([^<]+)</time>', page)
    assert len(found) >= 5  # two runs and the history's moves
    for stamp, text in found:
        at = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert text == at.strftime("%Y-%m-%d %H:%M UTC")


async def test_the_browser_shows_its_own_time_zone_and_utc_on_hover(browser: Browser, site) -> None:
    await browser.time_zone(ZONE)
    try:
        await browser.open(site.login_url("card/reviewed"))
        shown = await browser.js(TIMES)
    finally:
        await browser.time_zone("")
    assert len(shown) >= 5
    for time in shown:
        at = datetime.strptime(time["datetime"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert time["title"] == at.strftime("%Y-%m-%d %H:%M UTC")
        assert time["text"] == at.astimezone(ZoneInfo(ZONE)).strftime("%Y-%m-%d %H:%M")
        assert time["text"] != time["title"][:16]  # 5:30 off UTC
    # The ages the board keeps current are not moments: left to board.js.
    await browser.open(f"{site.url}")
    ages = await browser.js(
        "return Array.from(document.querySelectorAll('time[data-since]'), t => t.title)"
    )
    assert ages and set(ages) == {""}
    assert await browser.console_errors() == []
