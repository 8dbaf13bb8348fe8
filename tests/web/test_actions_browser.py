"""Every action test_owners_browser.py does not press, pressed in a real headless
Chromium by a signed-in owner: deny an agent's request with a reason, accept and
decline a requester's request (on the card's page and in the board's inbox), retry,
fix, cancel, archive, deploy and confirm a split plan. After each press the browser
is where the form's redirect leads, the store changed as the chat command changes
it, and the card page's history names the owner "via web"."""

from __future__ import annotations

import pytest

from chatbot.domain.action_labels import action_label
from chatbot.domain.phases import Phase
from chatbot.store import jobs as job_store
from tests.web.browser import Browser
from tests.web.owners import OWNER_ID, OwnerSite
from tests.web.test_owners_browser import click, said, sign_in, type_in
from tests.web.test_owners_http import VIA_WEB
from tests.web.test_waiting_http import waiting_cards

REQUESTER = "xmpp:req@localhost"
# The card page's history table, newest first: (action, actor) of each row.
HISTORY = (
    "return Array.from(document.querySelectorAll('table.history tbody tr'),"
    " row => [row.cells[3].textContent, row.cells[4].textContent]);"
)


# The `site` fixture (tests/web/conftest.py) is a board whose owners sign in and act.
OWNERS = True


async def page_history(browser: Browser) -> list[tuple[str, str]]:
    return [tuple(row) for row in await browser.js(HISTORY)]


async def open_card(browser: Browser, site: OwnerSite, slug: str) -> None:
    await browser.open(f"{site.url}card/{slug}")
    assert f"Signed in as {OWNER_ID}." in await browser.text("#act")


async def test_denying_an_agents_request_with_a_reason(browser: Browser, site) -> None:
    card = await site.board.reads.card("building")  # its builder runs
    job = (await site.board.reads.view("building")).active_job
    await site.board.talk.begins(job)
    asked = await site.board.talk.ask_approval(job, card, tool="Bash", command="rm -rf /", cwd="/w")
    await sign_in(browser, site)
    await open_card(browser, site, "building")
    reason = "not <that>; use a temp dir"
    await type_in(browser, f"#decide-{asked.id} form input[name=text]", reason)
    await click(browser, f"#decide-{asked.id} form input[value=deny] ~ button")
    assert browser.driver.current_url == f"{site.url}card/building#act"
    shown = await said(browser)
    assert "building: denied" in shown and f"Reason for the agent: {reason}" in shown
    denied = await site.board.talk.approval(asked.id)
    assert (denied.state, denied.reason, denied.actor) == ("denied", reason, VIA_WEB)
    # Decided: its form is gone from the page, the card still builds.
    assert await browser.js(f"return document.getElementById('decide-{asked.id}')") is None
    assert (await site.board.reads.card("building")).phase is Phase.BUILDING
    assert (await page_history(browser))[0] == ("approval_denied", VIA_WEB)
    assert await browser.js("return window.pwned === undefined")
    assert await browser.console_errors() == []


# (card, action, the phase it moves to, what chat answers): each as its command in chat.
MOVES = [
    ("broken", "retry", Phase.BUILDING, "broken: /retry — failed → building."),
    ("broken", "fix", Phase.FIXER_RUNNING, "broken: /fix — failed → fixer running."),
    ("operator", "cancel", Phase.PLANNED, "operator: /cancel — operator running → planned."),
    ("plain-1", "archive", Phase.ARCHIVED, "plain-1: /archive — planned → archived."),
    # A deployment is a job; the card stays ready until it has run.
    ("reviewed", "deploy", Phase.READY_FOR_DEPLOYMENT, "reviewed: deployment of ab12cd34ef56"),
    ("planned-split", "confirm", Phase.SPLIT, "planned-split: /confirm — split plan waiting"),
]


@pytest.mark.parametrize(("slug", "action", "phase", "answer"), MOVES, ids=[m[1] for m in MOVES])
async def test_a_move_from_the_card_page(
    browser: Browser, site, slug: str, action: str, phase: Phase, answer: str
) -> None:
    await waiting_cards(site)  # a failed build and a split plan among the seeded cards
    jobs_before = await job_store.listing(site.store.reader)
    await sign_in(browser, site)
    await open_card(browser, site, slug)
    await click(browser, f"form.act input[value={action}] ~ button")
    assert browser.driver.current_url == f"{site.url}card/{slug}#act"
    assert answer in await said(browser)
    assert await browser.js("return document.querySelector('#said .refused')") is None
    card = await site.board.reads.card(slug)
    assert card.phase is phase
    if action == "deploy":
        new = [j for j in await job_store.listing(site.store.reader) if j not in jobs_before]
        assert [(j.kind, j.card_id) for j in new] == [("deploy", card.id)]
    if action == "confirm":  # the plan's card is made and goes its way
        assert (await site.board.reads.card("plan-child")).phase is not Phase.ARCHIVED
    # The history says the move in words ("retried"), not its code.
    assert (await page_history(browser))[0] == (action_label(action), VIA_WEB)
    assert await browser.console_errors() == []


async def requests(site: OwnerSite):
    async with site.board.transaction() as tx:
        accepted = await tx.add_request(REQUESTER, "xmpp", "start", "plain-1")
        declined = await tx.add_request(REQUESTER, "xmpp", "start", "plain-2")
    return {"accept": (accepted.id, "plain-1"), "decline": (declined.id, "plain-2")}


# Where the owner presses it: the request's card page, or the inbox on the board page.
WHERE = {
    "card": ("form.act.request input[value='{id}'] ~ button[value={action}]", "card/{slug}#act"),
    "inbox": ("#inbox li.inbox-request button[formaction='/request/{id}/act'][value={action}]", ""),
}

# How many requests the board page's inbox lists.
LINES = "return document.querySelectorAll('#inbox li.inbox-request').length"


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_accepting_or_declining_a_requesters_request(
    browser: Browser, site, where: str, action: str
) -> None:
    request_id, slug = (await requests(site))[action]
    await sign_in(browser, site)  # lands on the board, its inbox
    button, lands = WHERE[where]
    if where == "card":
        await open_card(browser, site, slug)
    else:
        assert await browser.js(LINES) == 2
    pressed = button.format(id=request_id, action=action)
    await click(browser, pressed)
    assert browser.driver.current_url == site.url + lands.format(slug=slug)
    state = {"accept": "accepted", "decline": "declined"}[action]
    assert f"Request #{request_id} {state} by {VIA_WEB}." in await said(browser)
    request = await site.board.reads.request(request_id)
    assert (request.state, request.decided_by) == (state, VIA_WEB)
    # Accepted, the requester's /start runs as the owner's; declined, the card stays.
    phase = {"accept": Phase.OPERATOR_RUNNING, "decline": Phase.PLANNED}[action]
    assert (await site.board.reads.card(slug)).phase is phase
    if where == "inbox":
        # Its line is gone from the inbox; the other request's stays.
        assert await browser.js(LINES) == 1
        assert await browser.js("return document.querySelector(arguments[0])", pressed) is None
        await open_card(browser, site, slug)
    newest = (await page_history(browser))[0]
    assert (newest == (action_label("start"), VIA_WEB)) is (action == "accept"), newest
    assert await browser.console_errors() == []
