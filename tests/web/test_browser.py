"""The web board in a real headless Chromium (Debian's chromium, Selenium, chromedriver).

Each test logs in as a new visitor would (`/?token=...` once), then looks at what
the browser shows: the DOM after the page's own script ran, console errors (a
Content-Security-Policy violation is one), screenshots.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from selenium.webdriver.support.wait import WebDriverWait

from chatbot.domain.transitions import Action
from chatbot.web import live
from tests.web.boards import HOSTILE_SCRIPT, HOSTILE_TITLE, OWNER, system
from tests.web.browser import SEEN, WATCH_CARD, WATCH_LIVE, WATCH_TEXT, Browser, png_size
from tests.web.conftest import open_site

SLUGS_IN_COLUMNS = """
const found = {};
document.querySelectorAll('ul.cards').forEach(list => {
  found[list.id.slice(4)] = Array.from(list.children, item => item.id.slice(5));
});
return found;
"""


async def login(browser: Browser, site, path: str = "") -> None:
    await browser.open(site.login_url(path))
    assert browser.driver.current_url == f"{site.url}{path}"  # the token left the address


async def test_the_board_renders_every_card_in_its_column(browser: Browser, site) -> None:
    await login(browser, site)
    columns = await browser.js(SLUGS_IN_COLUMNS)
    assert set(columns) == {"planned", "working", "waiting", "review", "ready", "done", "archived"}
    assert await browser.js("return document.documentElement.dataset.js") == "on"
    shown = {slug: group for group, slugs in columns.items() for slug in slugs}
    assert shown == site.seeded.groups
    for group, slugs in columns.items():
        assert await browser.text(f"#count-{group}") == str(len(slugs))
    cookie = next(c for c in await browser.cookies() if c["name"] == "board_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert site.token not in cookie["value"]
    # What a card on the board says: title, lane, running time, the open question.
    building = await browser.text("#card-building")
    assert "Being built" in building and "lane light" in building and "running" in building
    asks = await browser.text("#card-asks .question")
    assert "Which database?" in asks and "SQLite" in asks
    assert "queued" in await browser.text("#card-operator")
    # No Content-Security-Policy violation, no failed load: the console is clean.
    assert await browser.console_errors() == []


async def test_a_card_page_shows_its_reports_rendered(browser: Browser, site) -> None:
    await login(browser, site, "card/reviewed")
    rendered = await browser.js(
        "const r = document.querySelector('#reviews .md');"
        "return {h2: r.querySelector('h2').textContent, strong: r.querySelector('strong')"
        ".textContent, cells: r.querySelectorAll('table td').length,"
        "scripts: document.querySelectorAll('#main script').length, text: r.textContent};"
    )
    assert rendered["h2"] == "Findings"
    assert rendered["strong"] == "200"
    assert rendered["cells"] == 2
    assert rendered["scripts"] == 0 and HOSTILE_SCRIPT in rendered["text"]
    assert "approve for ab12cd34ef56" in await browser.text("#reviews h3")
    intent = await browser.js("return document.querySelector('#intent .md code').textContent")
    assert intent == "GET /hello"
    runs = await browser.text("#runs table")
    assert "$0.5000" in runs and "250,000" in runs and "builder" in runs
    history = await browser.text("#history")
    assert "review_approved" in history and "ready for deployment" in history
    await browser.open(f"{site.url}card/queues")
    research = await browser.js(
        "return Array.from(document.querySelectorAll('#research .md ol li'), li => li.textContent)"
    )
    assert research[0].startswith("arq: small")
    await browser.open(f"{site.url}card/asks")
    options = await browser.js(
        "return Array.from(document.querySelectorAll('#question ol li'), li => li.textContent)"
    )
    assert options == ["SQLite", f"PostgreSQL {HOSTILE_TITLE}"]
    assert await browser.console_errors() == []


@pytest.fixture
async def pushed_site(tmp_path: Path, monkeypatch):
    """A site whose open pages hear of a move only from the store's commit hook: the
    slow look for other processes' commits is put off for an hour, so whatever reaches
    a page was pushed by the commit itself (how soon: bench/web_board.py)."""
    monkeypatch.setattr(live, "FALLBACK_S", 3600.0)
    opened = await open_site(tmp_path)
    try:
        yield opened
    finally:
        await opened.web.stop()
        await opened.store.close()


async def test_a_transition_appears_in_the_open_page_without_reload(browser: Browser, pushed_site):
    site = pushed_site
    await login(browser, site)
    await browser.js(WATCH_LIVE)
    await browser.wait_js(SEEN)
    await browser.js("window.__samePage = true;")
    # An owner's move, then the worker's: each shows up in its new column.
    await browser.js(WATCH_CARD, "plain-0", "working")
    await site.board.act("plain-0", Action.START, actor=OWNER)
    await browser.wait_js(SEEN)
    # The operator card's job is the oldest in the operator's lane: the worker's turn.
    await browser.js(WATCH_CARD, "operator", "waiting")
    await system(
        site.board,
        "operator",
        Action.OPERATOR_NEEDS_HUMAN,
        question=("needs_human", "Light or heavy lane?", ["light", "heavy"]),
    )
    await browser.wait_js(SEEN)
    state = await browser.js(
        "return {same: window.__samePage === true,"
        " navigations: performance.getEntriesByType('navigation').length,"
        " question: document.querySelector('#card-operator .question').textContent,"
        " waiting: document.getElementById('count-waiting').textContent,"
        " planned: document.getElementById('count-planned').textContent,"
        " working: document.getElementById('count-working').textContent}"
    )
    assert state["same"] and state["navigations"] == 1
    assert "Light or heavy lane?" in state["question"]
    # Waiting: asks's question, reviewed's /deploy, and now the operator card's question.
    assert state["waiting"] == "3" and state["planned"] == "3" and state["working"] == "2"

    # The card's own page follows its card: the answer lands in its history.
    await browser.open(f"{site.url}card/operator")
    await browser.js(WATCH_LIVE)
    await browser.wait_js(SEEN)
    await browser.js("window.__samePage = true;")
    await browser.js(WATCH_TEXT, "answered")
    await site.board.answer("operator", "light", actor=OWNER)
    await browser.wait_js(SEEN)
    assert await browser.js("return window.__samePage === true")
    assert "operator running" in await browser.text("#facts")
    assert await browser.console_errors() == []


async def test_a_title_holding_markup_renders_as_text(browser: Browser, site) -> None:
    await login(browser, site)
    board = await browser.js(
        "return {title: document.querySelector('#card-hostile .title').textContent,"
        " images: document.querySelectorAll('img').length, pwned: window.pwned === 1}"
    )
    assert board == {"title": HOSTILE_TITLE, "images": 0, "pwned": False}
    await browser.open(f"{site.url}card/hostile")
    page = await browser.js(
        "return {title: document.querySelector('h1 .title').textContent,"
        " intent: document.querySelector('#intent .md').textContent,"
        " images: document.querySelectorAll('img').length,"
        " scripts: document.querySelectorAll('script').length, pwned: window.pwned === 1,"
        " page: document.title}"
    )
    assert page["title"] == HOSTILE_TITLE
    assert HOSTILE_SCRIPT in page["intent"]
    assert page["images"] == 0 and page["scripts"] == 2  # only board.js and times.js
    assert page["page"] == f"hostile: {HOSTILE_TITLE}" and not page["pwned"]
    assert await browser.console_errors() == []


async def test_without_the_token_the_browser_gets_401_and_no_data(browser: Browser, site):
    for path in ("", "card/reviewed", "runs", "events"):
        await browser.open(f"{site.url}{path}")
        body = await browser.text("body")
        assert body.startswith("401") and "token" in body
        source = await browser.source()
        assert not any(slug in source for slug in site.seeded.groups), path
    await browser.open(f"{site.url}?token=not-the-token")
    assert (await browser.text("body")).startswith("401")
    assert await browser.cookies() == []


async def test_a_phone_gets_one_column_and_no_sideways_scrolling(
    browser: Browser, site, tmp_path: Path
) -> None:
    # A slug and a title with no place to break must wrap, not widen the page.
    long_slug = "a" * 60
    (site.repo / "docs" / "intent" / f"{long_slug}.md").write_text("# " + "W" * 150 + "\n")
    await site.board.import_cards()
    await browser.phone()
    await login(browser, site)
    for path in ("", "card/reviewed", f"card/{long_slug}", "runs"):
        await browser.open(f"{site.url}{path}")
        shot = await browser.screenshot(tmp_path / f"phone-{path.replace('/', '-') or 'board'}.png")
        assert png_size(shot)[0] == 390 * 2  # the screenshot is the phone's width
        widths = await browser.js(
            "return {scroll: document.documentElement.scrollWidth, view: window.innerWidth,"
            " body: document.body.scrollWidth}"
        )
        assert widths["view"] == 390
        assert widths["scroll"] <= widths["view"] and widths["body"] <= widths["view"], (
            path,
            widths,
        )
    await browser.open(site.url)
    columns = await browser.js(
        "return Array.from(document.querySelectorAll('.column'), c => {"
        " const box = c.getBoundingClientRect(); return [box.left, box.width, box.top]; })"
    )
    assert len(columns) == 7
    assert len({round(left) for left, _, _ in columns}) == 1  # one above the other
    assert all(width > 390 * 0.9 for _, width, _ in columns)
    # Stacked in the document's order, but "Waiting for you" (the third) comes first.
    tops = [top for _, _, top in columns]
    assert tops[2] == min(tops)
    others = tops[:2] + tops[3:]
    assert others == sorted(others)


async def test_without_javascript_the_board_still_shows(site, tmp_path: Path) -> None:
    browser = Browser(javascript=False)
    try:
        await login(browser, site)
        # The page's script marks the document when it runs; here it never did.
        assert await browser.js("return document.documentElement.dataset.js") is None
        assert await browser.js("return document.getElementById('live').hidden") is True
        columns = await browser.js(SLUGS_IN_COLUMNS)
        shown = {slug: group for group, slugs in columns.items() for slug in slugs}
        assert shown == site.seeded.groups
        await browser.open(f"{site.url}card/reviewed")
        assert "Findings" in await browser.text("#reviews")
    finally:
        browser.close()


async def test_a_link_from_another_site_opens_the_board_with_the_strict_cookie(
    browser: Browser, site
) -> None:
    """A SameSite=Strict cookie is not sent on a click from another site (a chat app's
    page); the 401 page opens the address again from the board's own site, where the
    browser sends it, and the card shows."""
    await login(browser, site)
    refused = []
    unauthorized = site.web.guard._unauthorized

    def counted(request):
        refused.append(request.headers.get("Sec-Fetch-Site"))
        return unauthorized(request)

    site.web.guard._unauthorized = counted
    target = f"{site.url}card/reviewed"
    await browser.open(f"data:text/html,<a id=go href='{target}'>the card</a>")
    await browser.js("document.getElementById('go').click()")

    def arrived(driver) -> bool:
        return driver.current_url == target and "Findings" in driver.page_source

    await asyncio.to_thread(WebDriverWait(browser.driver, 10).until, arrived)
    assert refused == ["cross-site"]  # refused once without its cookie, then let in
