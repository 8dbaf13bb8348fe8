"""The board on a phone, in headless Chromium: "Waiting for you" comes first."""

from __future__ import annotations

from tests.web.browser import Browser


async def test_on_a_phone_waiting_for_you_comes_first(browser: Browser, site) -> None:
    await browser.open(site.login_url())
    tops = (
        "return Array.from(document.querySelectorAll('section.column'),"
        " s => [s.id, s.getBoundingClientRect().top, s.getBoundingClientRect().left]);"
    )
    wide = await browser.js(tops)
    assert wide[0][0] == "group-planned"  # the document's order is kept
    # On a desktop the columns stand side by side, planned leftmost.
    assert min(wide, key=lambda s: (s[1], s[2]))[0] == "group-planned"
    await browser.phone()
    await browser.open(site.url)
    narrow = await browser.js(tops)
    first = min(narrow, key=lambda s: s[1])
    assert first[0] == "group-waiting", narrow
    assert len({left for _, _, left in narrow}) == 1  # one column
