"""A signed-in owner acts on the board page's waiting cards in a real headless Chromium:
the buttons of a card the live events brought work (they name the page's one owner
form), the card leaves the waiting group, and what was pushed carries no CSRF token.
A reader's page hides the same pushed buttons; without JavaScript the buttons work."""

from __future__ import annotations

from chatbot.domain.phases import Kind, Phase
from chatbot.store import cards as card_store
from chatbot.store import questions as question_store
from tests.web.browser import SEEN, WATCH_CARD, WATCH_LIVE, Browser
from tests.web.owners import OwnerSite
from tests.web.test_owners_browser import click, said, sign_in
from tests.web.test_owners_http import VIA_WEB

CARD_HTML = "return document.getElementById('card-' + arguments[0]).outerHTML"
ACTS_SHOWN = (
    "const acts = document.querySelector('#card-' + arguments[0] + ' .acts');"
    "return acts !== null && getComputedStyle(acts).display !== 'none';"
)


# The `site` fixture (tests/web/conftest.py) is a board whose owners sign in and act.
OWNERS = True


async def ask(site: OwnerSite, slug: str) -> None:
    async with site.store.transaction() as db:
        card = await card_store.create(
            db, slug, Kind.INTENT, Phase.NEEDS_HUMAN, actor="t", title=f"Asks {slug}"
        )
        await question_store.ask(db, card.id, "needs_human", "Which cache?", ["Redis", "none"])


async def live(browser: Browser) -> None:
    await browser.js(WATCH_LIVE)
    await browser.wait_js(SEEN)


async def pushed(browser: Browser, slug: str, group: str) -> None:
    await browser.js(WATCH_CARD, slug, group)
    await browser.wait_js(SEEN)


async def test_a_pushed_waiting_cards_button_answers_it_and_it_leaves_the_group(
    browser: Browser, site
) -> None:
    await sign_in(browser, site)  # lands on the board
    csrf = await browser.js("return document.querySelector('#owner-act input[name=csrf]').value")
    assert csrf and await browser.js(ACTS_SHOWN, "asks")
    await live(browser)
    await ask(site, "cache")
    await pushed(browser, "cache", "waiting")
    html = await browser.js(CARD_HTML, "cache")
    assert 'form="owner-act"' in html and csrf not in html and "csrf" not in html
    assert await browser.js(ACTS_SHOWN, "cache")
    await click(browser, "#card-cache button.opt[formaction$='option=1']")
    assert browser.driver.current_url == site.url  # back on the board, not the card
    assert "Answer recorded for cache" in await said(browser)
    card = await site.board.reads.card("cache")
    assert card.phase is Phase.OPERATOR_RUNNING
    assert (card.data.answers[-1]["answer"], card.data.answers[-1]["by"]) == (
        "Redis",
        VIA_WEB,
    )
    where = "return document.getElementById('card-cache').parentElement.id"
    assert await browser.js(where) == "col-working"
    assert await browser.js("return document.querySelectorAll('#card-cache button').length") == 0
    # Nothing a live event put on the page holds the token: only the owner form does.
    assert await browser.js(
        "return document.getElementById('main').innerHTML.includes(arguments[0])", csrf
    ) is False  # fmt: skip
    assert await browser.console_errors() == []


async def test_a_readers_page_hides_the_pushed_buttons(browser: Browser, site) -> None:
    await browser.open(site.login_url())
    assert await browser.js("return document.getElementById('owner-act')") is None
    await live(browser)
    await ask(site, "cache")
    await pushed(browser, "cache", "waiting")
    assert "<button" in await browser.js(CARD_HTML, "cache")  # the same markup for all
    assert not await browser.js(ACTS_SHOWN, "cache")
    # Its buttons name a form this page does not have: a button without a form sends
    # nothing (and the server refuses a reader's form anyway: test_waiting_http).
    forms = "return Array.from(document.querySelectorAll('#card-cache button'), b => b.form)"
    assert await browser.js(forms) == [None, None, None, None]


async def test_without_javascript_a_board_button_works(site) -> None:
    browser = Browser(javascript=False)
    try:
        await sign_in(browser, site)
        await click(browser, "#card-asks button.opt[formaction$='option=1']")
        assert browser.driver.current_url == site.url
        assert "Answer recorded for asks" in await said(browser)
        assert (await site.board.reads.card("asks")).phase is Phase.OPERATOR_RUNNING
    finally:
        browser.close()
