"""Owners on the web board in a real headless Chromium: signing in with the link from
/web, acting from a card's page by pressing its buttons, and the refusals a browser
meets (a spent or expired link, a form from another site, a forged CSRF token, a
revoked session). Every change is checked in the store, every refusal by the store
not changing."""

from __future__ import annotations

import asyncio

from aiohttp import web
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from chatbot.board.web_sessions import LINK_VALID_S
from chatbot.domain.phases import Phase
from tests.web.browser import Browser
from tests.web.owners import OWNER_ID, OwnerSite
from tests.web.test_owners_http import VIA_WEB, history, snapshot

# The `site` fixture (tests/web/conftest.py) is a board whose owners sign in and act.
OWNERS = True


async def click(browser: Browser, selector: str) -> None:
    """Press a button as a person would, and wait until the form's answer is loaded (a
    new document: the mark left on this one is gone)."""
    driver = browser.driver
    driver.execute_script("window.__before_click = true;")

    def answered(_) -> bool:
        return driver.execute_script(
            "return window.__before_click === undefined && document.readyState === 'complete'"
        )

    await asyncio.to_thread(lambda: driver.find_element(By.CSS_SELECTOR, selector).click())
    await asyncio.to_thread(WebDriverWait(driver, 10).until, answered)


async def type_in(browser: Browser, selector: str, text: str) -> None:
    await asyncio.to_thread(
        lambda: browser.driver.find_element(By.CSS_SELECTOR, selector).send_keys(text)
    )


async def sign_in(browser: Browser, site: OwnerSite) -> str:
    token = await site.link()
    await browser.open(f"{site.url}signin/{token}")
    assert f"as {OWNER_ID}?" in await browser.text("#signin")
    await click(browser, "#signin button")
    assert browser.driver.current_url == site.url, await browser.text("body")
    return token


async def said(browser: Browser) -> str:
    return await browser.text("#said")


async def test_signing_in_with_the_link_and_starting_a_card(browser: Browser, site) -> None:
    token = await sign_in(browser, site)
    cookie = next(c for c in await browser.cookies() if c["name"] == "board_owner")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]
    assert token not in cookie["value"]
    # The board reads without its token: the session is enough.
    assert await browser.js("return document.querySelectorAll('ul.cards li').length") > 5
    await browser.open(f"{site.url}card/plain-0")
    assert f"Signed in as {OWNER_ID}." in await browser.text("#act")
    await click(browser, "form.act input[value=start] ~ button")
    assert browser.driver.current_url == f"{site.url}card/plain-0#act"
    assert "plain-0: /start — planned → operator running." in await said(browser)
    assert (await site.board.reads.card("plain-0")).phase is Phase.OPERATOR_RUNNING
    assert ("start", VIA_WEB) in await history(site, "plain-0")
    assert await browser.console_errors() == []


async def test_answering_by_an_option_button_and_in_words(browser: Browser, site) -> None:
    await sign_in(browser, site)
    await browser.open(f"{site.url}card/asks")
    await click(browser, "form.options button[value='1']")
    assert "Answer recorded for asks" in await said(browser)
    card = await site.board.reads.card("asks")
    assert card.phase is Phase.OPERATOR_RUNNING
    assert (card.data.answers[-1]["answer"], card.data.answers[-1]["by"]) == (
        "SQLite",
        VIA_WEB,
    )
    assert "SQLite" in await browser.text("#answers")
    assert await browser.js("return window.pwned === undefined")


async def test_approving_and_steering_a_running_agent(browser: Browser, site) -> None:
    card = await site.board.reads.card("building")
    job = (await site.board.reads.view("building")).active_job
    await site.board.talk.begins(job)
    asked = await site.board.talk.ask_approval(job, card, tool="Bash", command="curl x", cwd="/w")
    await sign_in(browser, site)
    await browser.open(f"{site.url}card/building")
    await click(browser, f"#decide-{asked.id} form input[value=approve] ~ button")
    assert "building: allowed once" in await said(browser)
    decided = await site.board.talk.approval(asked.id)
    assert (decided.state, decided.actor) == ("allowed", VIA_WEB)
    await type_in(browser, "form.steer textarea", "use the v2 API")
    await click(browser, "form.steer button")
    assert "building: sent to the builder" in await said(browser)
    [steer] = [r for r in await site.board.web.talk_of(card.id) if r.kind == "steer"]
    assert (steer.text, steer.actor) == ("use the v2 API", VIA_WEB)
    assert await browser.console_errors() == []


async def test_a_refused_move_shows_chats_answer_with_its_way_forward(
    browser: Browser, site
) -> None:
    await sign_in(browser, site)
    await browser.open(f"{site.url}card/plain-0")
    before = await snapshot(site)
    # A page left open while the card moved on offers what it no longer allows.
    await browser.js("document.querySelector('form.act input[name=action]').value = 'deploy';")
    await click(browser, "form.act input[value=deploy] ~ button")
    assert "/deploy is not possible there. Allowed: /start" in await said(browser)
    assert await snapshot(site) == before


async def test_a_forged_csrf_token_or_a_form_on_another_site_is_refused(
    browser: Browser, site
) -> None:
    await sign_in(browser, site)
    await browser.open(f"{site.url}card/plain-0")
    csrf = await browser.js("return document.querySelector('input[name=csrf]').value")
    before = await snapshot(site)
    await browser.js(
        "document.querySelectorAll('input[name=csrf]').forEach(i => i.value = 'forged');"
    )
    await click(browser, "form.act input[value=start] ~ button")
    assert "not one of your session" in await browser.text("#message")
    assert await snapshot(site) == before
    # Another site's page posts the form, with the right token even: refused.
    target = f"{site.url}card/plain-0/act"
    evil = web.Application()

    async def page(_: web.Request) -> web.Response:
        return web.Response(
            content_type="text/html",
            text=f'<form method="post" action="{target}"><input name="csrf" value="{csrf}">'
            '<input name="action" value="start"><button id="go">go</button></form>',
        )

    evil.router.add_get("/", page)
    runner = web.AppRunner(evil)
    await runner.setup()
    try:
        # localhost is another site: the SameSite=Strict cookie stays home, the board
        # sees nobody. 127.0.0.1 on another port is the same site, so the cookie goes
        # along: the Origin (and Sec-Fetch-Site) the browser sends refuses it.
        for host, refusal in (
            ("localhost", "This board needs a sign-in"),
            ("127.0.0.1", "This came from another site"),
        ):
            other = web.TCPSite(runner, host, 0)
            await other.start()
            port = other._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            await browser.open(f"http://{host}:{port}/")
            await click(browser, "#go")
            assert browser.driver.current_url == target
            assert refusal in await browser.text("body")
    finally:
        await runner.cleanup()
    assert await snapshot(site) == before
    assert (await site.board.reads.card("plain-0")).phase is Phase.PLANNED


async def test_a_spent_or_expired_link_and_a_revoked_session(browser: Browser, site) -> None:
    token = await sign_in(browser, site)
    browser.reset()  # another browser opens the same link
    await browser.open(f"{site.url}signin/{token}")
    assert "was used already" in await browser.text("#message")
    assert [c for c in await browser.cookies() if c["name"] == "board_owner"] == []
    late = await site.link()
    sessions = site.board.web_sessions
    real_clock = sessions.clock
    sessions.clock = lambda: real_clock() + LINK_VALID_S + 1
    try:
        await browser.open(f"{site.url}signin/{late}")
        assert "has expired" in await browser.text("#message")
    finally:
        sessions.clock = real_clock
    # A signed-in browser whose session is revoked in chat sees that, and no card.
    await sign_in(browser, site)
    await browser.open(f"{site.url}card/plain-0")
    before = await snapshot(site)
    await site.board.web_sessions.revoke(OWNER_ID)
    await click(browser, "form.act input[value=start] ~ button")
    assert "Your web session has ended" in await browser.text("body")
    await browser.open(f"{site.url}card/plain-0")
    body = await browser.text("body")
    assert "Your web session has ended" in body and "Plain card 0" not in body
    assert await snapshot(site) == before
