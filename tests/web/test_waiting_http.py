"""A signed-in owner acts on the board page's "Waiting for you" cards over plain HTTP: the
page's one owner form holds the CSRF token, each waiting card's buttons name it, the
answer leads back to the board and says there what chat would have said. A reader sees
no buttons and cannot act; the live events carry the buttons but never a token."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import aiohttp

from chatbot.board.split_plan import NewChild, dump
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.store import cards as card_store
from chatbot.store import questions as question_store
from tests.web.boards import HOSTILE_TITLE, OWNER
from tests.web.owners import OwnerSite, open_owner_site, owner
from tests.web.test_http import Stream
from tests.web.test_owners_http import VIA_WEB, history, snapshot

OWNER_FORM = re.compile(
    r'<form id="owner-act" method="post" action="/" hidden>'
    r'<input type="hidden" name="csrf" value="([^"]+)">'
    r'<input type="hidden" name="back" value="board"></form>'
)


# The `site` fixture (tests/web/conftest.py) is a board whose owners sign in and act.
OWNERS = True


async def waiting_cards(site: OwnerSite) -> None:
    """A failed build, a failed synthesis, an interrupted run and a split plan, all
    waiting for an owner next to the seeded open question (`asks`)."""
    async with site.store.transaction() as db:
        for slug, stage in (("broken", "builder"), ("unsynthesized", "synthesis")):
            await card_store.create(
                db, slug, Kind.INTENT, Phase.FAILED, actor="t", title=slug,
                failure_stage=stage, failure_detail="boom", lane="light",
            )  # fmt: skip
        await card_store.create(
            db, "stopped", Kind.INTENT, Phase.INTERRUPTED, actor="t", title="Stopped",
            failure_stage="builder", lane="light",
        )  # fmt: skip
        child = NewChild("plan-child", "A child", "docs/intent/plan-child.md")
        planned = await card_store.create(
            db, "planned-split", Kind.INTENT, Phase.SPLIT_PLAN_WAITING, actor="t",
            title="Split me", data={"split_plan": dump([(child, "# A child\n")])},
        )  # fmt: skip
        await question_store.ask(db, planned.id, "split_plan", "Two parts are easier.", [])


def card_html(page: str, slug: str) -> str:
    # A card's own list (its options) ends in </li> too: it ends before the next card.
    found = re.search(
        rf'<li class="card[^"]*" id="card-{slug}">.*?</li>(?=<li class="card|</ul>)', page
    )
    assert found is not None, slug
    return found.group(0)


def buttons(html: str) -> list[tuple[str, str]]:
    """(formaction, value) of every button, in order."""
    return re.findall(
        r'<button (?:class="opt" )?form="owner-act" formaction="([^"]+)" name="action" '
        r'value="([a-z]+)">',
        html,
    )


async def board_post(site: OwnerSite, cookie: str, path: str, action: str, csrf: str):
    """What a browser sends for a board button: the owner form's fields and the button's."""
    return await site.request(
        "POST",
        path.lstrip("/"),
        headers=owner(cookie),
        data={"csrf": csrf, "back": "board", "action": action},
    )


async def test_each_waiting_card_has_the_buttons_its_state_allows(site: OwnerSite) -> None:
    await waiting_cards(site)
    cookie = await site.sign_in()
    status, _, page = await site.request("GET", "", headers=owner(cookie))
    assert status == 200 and "data-owner" in page and OWNER_FORM.search(page)
    act = "/card/{}/act"
    assert buttons(card_html(page, "asks")) == [
        (act.format("asks") + "?option=1", "answer"),
        (act.format("asks") + "?option=2", "answer"),
        (act.format("asks"), "start"),
        (act.format("asks"), "archive"),
    ]
    asks = card_html(page, "asks")
    assert "<img src=x" not in asks and "&lt;img src=x" in asks  # an option is text
    assert '<a href="/card/asks#act">Answer in words…</a>' in asks
    expected = {
        "broken": ["start", "retry", "fix", "archive"],
        # A synthesis is not retried: its failure is fixed or started again.
        "unsynthesized": ["start", "fix", "archive"],
        "stopped": ["fix", "cancel"],
        "planned-split": ["confirm", "archive"],
        # Approved, its deployment pending: it waits for /deploy (the inbox lists it).
        "reviewed": ["deploy", "archive"],
    }
    for slug, actions in expected.items():
        html = card_html(page, slug)
        assert buttons(html) == [(act.format(slug), a) for a in actions], slug
    assert '<a href="/card/stopped#act">Steer…</a>' in card_html(page, "stopped")
    assert "Answer in words…" in card_html(page, "planned-split")  # a reason to decline
    # Only the waiting group's cards have buttons.
    for slug in ("plain-0", "building", "in-review"):
        assert "<button" not in card_html(page, slug), slug


async def test_an_owner_answers_confirms_and_retries_from_the_board(site: OwnerSite) -> None:
    await waiting_cards(site)
    cookie = await site.sign_in()
    _, _, page = await site.request("GET", "", headers=owner(cookie))
    csrf = OWNER_FORM.search(page).group(1)
    [(to, _), *_] = buttons(card_html(page, "asks"))
    status, headers, _ = await board_post(site, cookie, to, "answer", csrf)
    assert status == 303 and headers["Location"] == "/"
    card = await site.board.reads.card("asks")
    assert card.phase is Phase.OPERATOR_RUNNING
    assert (card.data.answers[-1]["answer"], card.data.answers[-1]["by"]) == (
        "SQLite",
        VIA_WEB,
    )
    _, _, page = await site.request("GET", "", headers=owner(cookie))
    said = re.search(r'<div id="said" role="status">.*?</div>', page).group(0)
    assert "Answer recorded for asks" in unescape(said)
    assert 'id="card-asks"' in page and "<button" not in card_html(page, "asks")

    status, headers, _ = await board_post(site, cookie, "/card/planned-split/act", "confirm", csrf)
    assert (status, headers["Location"]) == (303, "/")
    assert (await site.board.reads.card("planned-split")).phase is Phase.SPLIT
    assert (await site.board.reads.card("plan-child")).phase is not Phase.ARCHIVED
    assert ("confirm", VIA_WEB) in await history(site, "planned-split")

    status, headers, _ = await board_post(site, cookie, "/card/broken/act", "retry", csrf)
    assert (status, headers["Location"]) == (303, "/")
    assert (await site.board.reads.card("broken")).phase is Phase.BUILDING
    assert ("retry", VIA_WEB) in await history(site, "broken")


async def test_a_refusal_is_shown_on_the_board_with_its_way_forward(site: OwnerSite) -> None:
    await waiting_cards(site)
    cookie = await site.sign_in()
    _, _, page = await site.request("GET", "", headers=owner(cookie))
    csrf = OWNER_FORM.search(page).group(1)
    before = await snapshot(site)
    # A board left open while the card moved on: a synthesis cannot be retried.
    status, headers, _ = await board_post(site, cookie, "/card/unsynthesized/act", "retry", csrf)
    assert (status, headers["Location"]) == (303, "/")
    assert await snapshot(site) == before
    _, _, page = await site.request("GET", "", headers=owner(cookie))
    said = unescape(re.search(r'<div id="said" role="status">.*?</div>', page).group(0))
    assert 'class="refused"' in said
    assert "unsynthesized is in phase failed; /retry is not possible there. Allowed:" in said
    assert "/fix" in said
    # The card's own page keeps its own: it was not acted on from there.
    _, _, card = await site.request("GET", "card/unsynthesized", headers=owner(cookie))
    assert 'id="said"' not in card


async def test_back_goes_only_where_the_board_knows(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    csrf = await site.csrf(cookie, "plain-0")
    for back in ("https://evil.example/", "//evil.example", "/runs", ""):
        status, headers, _ = await site.request(
            "POST",
            "card/plain-0/act",
            headers=owner(cookie),
            data={"csrf": csrf, "back": back, "action": "archive"},
        )
        assert (status, headers["Location"]) == (303, "/card/plain-0#act"), back


async def test_a_reader_sees_no_buttons_and_cannot_act_with_the_boards_token(
    site: OwnerSite,
) -> None:
    await waiting_cards(site)
    status, _, page = await site.request("GET", "", headers=site.headers())
    assert status == 200
    assert "<button" not in page and "<form" not in page and 'name="csrf"' not in page
    assert "data-owner" not in page and 'id="card-asks"' in page
    cookie = await site.sign_in()
    csrf = OWNER_FORM.search((await site.request("GET", "", headers=owner(cookie)))[2]).group(1)
    before = await snapshot(site)
    for path, action in (("/card/asks/act?option=1", "answer"), ("/card/broken/act", "retry")):
        # The board's token, even with an owner's CSRF token: it only reads.
        status, _, body = await site.request(
            "POST",
            path.lstrip("/"),
            headers=site.headers(),
            data={"csrf": csrf, "back": "board", "action": action},
        )
        assert status == 403 and "Only an owner signed in with /web" in unescape(body)
    assert await snapshot(site) == before


async def test_another_sessions_csrf_token_is_refused_from_the_board(site: OwnerSite) -> None:
    await waiting_cards(site)
    mine, theirs = await site.sign_in(), await site.sign_in()
    _, _, their_page = await site.request("GET", "", headers=owner(theirs))
    their_csrf = OWNER_FORM.search(their_page).group(1)
    before = await snapshot(site)
    for path, action in (("/card/asks/act?option=1", "answer"), ("/card/broken/act", "retry")):
        status, _, body = await board_post(site, mine, path, action, their_csrf)
        assert status == 403 and "not one of your session" in unescape(body)
        status, _, body = await board_post(site, mine, path, action, "")
        assert status == 403 and "not one of your session" in unescape(body)
    assert await snapshot(site) == before


async def test_live_events_bring_the_buttons_and_no_token(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    _, _, page = await site.request("GET", "", headers=owner(cookie))
    csrf = OWNER_FORM.search(page).group(1)
    mark = (await site.board.web.change_mark()).token()
    async with aiohttp.ClientSession(headers=owner(cookie)) as http:
        response = await http.get(f"{site.url}events?view=board&since={mark}")
        stream = Stream(response)
        async with site.store.transaction() as db:
            card = await card_store.create(
                db, "new-ask", Kind.INTENT, Phase.NEEDS_HUMAN, actor=OWNER, title=HOSTILE_TITLE
            )
            await question_store.ask(db, card.id, "needs_human", "Which?", ["this", "that"])
        event = await stream.next()
        [pushed] = event["cards"]
        assert (pushed["slug"], pushed["group"]) == ("new-ask", "waiting")
        assert buttons(pushed["html"])[:2] == [
            ("/card/new-ask/act?option=1", "answer"),
            ("/card/new-ask/act?option=2", "answer"),
        ]
        assert csrf not in str(event) and "csrf" not in str(event)
        # The card leaves the waiting group: pushed again, without buttons.
        await site.board.act("new-ask", Action.ARCHIVE, actor=OWNER)
        event = await stream.next()
        [pushed] = event["cards"]
        assert pushed["group"] == "archived" and "<button" not in pushed["html"]
        response.close()


async def test_the_card_page_confirms_a_plan_too_and_german_buttons(tmp_path: Path) -> None:
    german = await open_owner_site(tmp_path, locale="de")
    try:
        await waiting_cards(german)
        cookie = await german.sign_in()
        _, _, page = await german.request("GET", "", headers=owner(cookie))
        plan = card_html(page, "planned-split")
        assert 'value="confirm">Plan bestätigen</button>' in plan
        assert ">In Worten antworten …</a>" in plan
        assert ">Lenken …</a>" in card_html(page, "stopped")
        _, _, card = await german.request("GET", "card/planned-split", headers=owner(cookie))
        assert (
            '<input type="hidden" name="action" value="confirm">'
            '<button type="submit">Plan bestätigen</button>'
        ) in card
    finally:
        await german.close()
