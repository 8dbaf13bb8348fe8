"""A signed-in owner's inbox on the board page in a real headless Chromium: an agent's
approval request (its card is in "working", so no waiting card carries it) is allowed
with the inbox's button, the browser lands back on the board and the line is gone; on
a phone the inbox comes before the board."""

from __future__ import annotations

from tests.web.browser import Browser
from tests.web.owners import OwnerSite
from tests.web.test_owners_browser import click, said, sign_in
from tests.web.test_owners_http import VIA_WEB

APPROVALS = "return document.querySelectorAll('#inbox li.inbox-approval').length"
TOP = "return document.querySelector(arguments[0]).getBoundingClientRect().top"


# The `site` fixture (tests/web/conftest.py) is a board whose owners sign in and act.
OWNERS = True


async def asking(site: OwnerSite) -> int:
    """The running builder of `building` asks to run a command; the request's id."""
    card = await site.board.reads.card("building")
    job = (await site.board.reads.view("building")).active_job
    await site.board.talk.begins(job)
    asked = await site.board.talk.ask_approval(job, card, tool="Bash", command="curl x", cwd="/w")
    return asked.id


async def test_approving_from_the_inbox_allows_it_and_the_line_is_gone(
    browser: Browser, site
) -> None:
    talk_id = await asking(site)
    await sign_in(browser, site)  # lands on the board
    assert await browser.js(APPROVALS) == 1
    assert "curl x" in await browser.text("#inbox li.inbox-approval code")
    await click(browser, "#inbox li.inbox-approval button[value=approve]")
    assert browser.driver.current_url == site.url  # back on the board
    assert "building: allowed once" in await said(browser)
    decided = await site.board.talk.approval(talk_id)
    assert (decided.state, decided.actor) == ("allowed", VIA_WEB)
    assert await browser.js(APPROVALS) == 0
    assert await browser.console_errors() == []


async def test_on_a_phone_the_inbox_comes_first(browser: Browser, site) -> None:
    await asking(site)
    await browser.phone()
    await sign_in(browser, site)
    inbox, board = await browser.js(TOP, "#inbox"), await browser.js(TOP, "#main")
    waiting = await browser.js(TOP, "#group-waiting")
    assert inbox < board <= waiting
    # Its buttons fit the phone's width: nothing sticks out sideways.
    overflow = "return document.documentElement.scrollWidth > window.innerWidth"
    assert await browser.js(overflow) is False
