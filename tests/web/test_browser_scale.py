"""A board larger than its page, in real headless Chromium: a move changes only its card
and the counts in the open page; a card arriving in a capped group goes on top."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.wait import WebDriverWait

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.web import live
from chatbot.web.groups import SHOWN, Group
from tests.web.boards import OWNER, many
from tests.web.browser import SEEN, WATCH_CARD, WATCH_LIVE, Browser
from tests.web.conftest import open_site

STATE = """
const ids = list => Array.from(document.getElementById('col-' + list).children, li => li.id.slice(5));
const counts = {};
document.querySelectorAll('.count').forEach(c => { counts[c.id.slice(6)] = c.textContent; });
const more = {};
document.querySelectorAll('a.more').forEach(a => {
  more[a.closest('section').id.slice(6)] = getComputedStyle(a).display !== 'none';
});
return {same: window.__samePage === true, more,
        navigations: performance.getEntriesByType('navigation').length,
        done: ids('done'), working: ids('working'), planned: ids('planned'), counts,
        total: document.getElementById('total').textContent};
"""
# Marks every card element now on the page: a card re-rendered or re-read loses its mark.
MARK_ALL = """
document.querySelectorAll('li.card').forEach(li => { li.__kept = true; });
window.__samePage = true;
"""
UNMARKED = """
return Array.from(document.querySelectorAll('li.card'))
  .filter(li => !li.__kept).map(li => li.id.slice(5));
"""


@pytest.fixture
async def big_site(tmp_path: Path, monkeypatch):
    """More done cards than the column shows; moves reach pages only by the commit hook."""
    monkeypatch.setattr(live, "FALLBACK_S", 3600.0)
    opened = await open_site(tmp_path)
    shipped = await many(opened.store, Phase.DEPLOYED, SHOWN[Group.DONE] + 5, "shipped")
    try:
        yield opened, shipped
    finally:
        await opened.web.stop()
        await opened.store.close()


async def test_a_move_updates_only_its_card_and_the_counts_in_place(browser: Browser, big_site):
    site, shipped = big_site
    await browser.open(site.login_url())
    await browser.js(WATCH_LIVE)
    await browser.wait_js(SEEN)
    before = await browser.js(STATE)
    cap = SHOWN[Group.DONE]
    assert before["done"] == shipped[::-1][:cap]
    assert before["counts"]["done"] == str(len(shipped) + 1)
    # The link to the rest shows where there is a rest.
    assert before["more"] == {group.value: group is Group.DONE for group in Group}
    await browser.js(MARK_ALL)

    await browser.js(WATCH_CARD, "plain-0", "working")
    await site.board.act("plain-0", Action.START, actor=OWNER)
    await browser.wait_js(SEEN)
    after = await browser.js(STATE)
    assert after["same"] and after["navigations"] == 1
    assert after["working"][0] == "plain-0" and "plain-0" not in after["planned"]
    assert after["counts"]["planned"] == "3" and after["counts"]["working"] == "3"
    assert after["total"] == before["total"]
    # Only the moved card is a new element; every other card is the one first loaded.
    assert await browser.js(UNMARKED) == ["plain-0"]

    # Into a capped group: on top of the recent list, the count rises, the list keeps
    # its length (the oldest shown gives way), and the group it left counts one less.
    await browser.js(WATCH_CARD, "reviewed", "done")
    await site.board.apply("reviewed", Action.DEPLOY_SUCCEEDED, reason="deployed")
    await browser.wait_js(SEEN)
    after = await browser.js(STATE)
    assert after["same"] and after["navigations"] == 1
    assert after["done"] == ["reviewed", *shipped[::-1][: cap - 1]]
    assert after["counts"]["done"] == str(len(shipped) + 2)
    assert after["counts"]["ready"] == "0"
    assert sorted(await browser.js(UNMARKED)) == ["plain-0", "reviewed"]
    assert await browser.console_errors() == []

    # The page without its script reads the same truth from the server.
    await browser.open(site.url)
    reloaded = await browser.js(STATE)
    assert reloaded["done"] == after["done"] and reloaded["counts"] == after["counts"]


async def test_the_search_form_works_without_javascript(big_site) -> None:
    site, shipped = big_site
    browser = Browser(javascript=False)
    try:
        await browser.open(site.login_url("cards"))
        driver = browser.driver

        def search() -> None:
            driver.find_element(By.NAME, "q").send_keys("card 2")
            Select(driver.find_element(By.NAME, "group")).select_by_value("done")
            driver.find_element(By.CSS_SELECTOR, "form.search button").click()
            WebDriverWait(driver, 10).until(lambda d: "q=card+2" in d.current_url)

        await asyncio.to_thread(search)
        found = await browser.js(
            "return Array.from(document.querySelectorAll('#results li'), li => li.id.slice(5))"
        )
        titled = [f"shipped-{n:03d}" for n in range(len(shipped)) if str(n).startswith("2")]
        assert found == titled[::-1]
    finally:
        browser.close()
