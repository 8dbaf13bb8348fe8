"""What an owner does from the web board is said in the card's rooms (issue 35 point 4):
the outbox gets "🌐 <owner> via web: <chat's answer>" in the move's own transaction, a
refused action gets nothing there; and a new draft from the board page's "New card"
form, through chat's /draft."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from chatbot.domain.phases import Kind, Phase
from chatbot.notify.notifier import Destination
from tests.web.owners import CSRF, OWNER_ID, OwnerSite, open_owner_site, owner

ROOM = Destination("xmpp", "board@conference.localhost")
CONSOLE = Destination("console", "owner@localhost", kind="person")
SAID = "🌐 owner@localhost via web: "
VIA_WEB = f"{OWNER_ID} via web"


@pytest.fixture
async def site(tmp_path: Path):
    opened = await open_owner_site(tmp_path, rooms=[ROOM, CONSOLE])
    try:
        yield opened
    finally:
        await opened.close()


async def outbox(site: OwnerSite) -> list[tuple]:
    rows = await site.store.reader.fetchall(
        "SELECT transport, room, target_kind, text, purpose, card_id, reply_to FROM outbox"
        " ORDER BY id"
    )
    return [tuple(row) for row in rows]


async def snapshot(site: OwnerSite) -> list:
    found = []
    for table in ("cards", "events", "jobs", "questions", "requests", "outbox", "kv"):
        rows = await site.store.reader.fetchall(f"SELECT * FROM {table} ORDER BY 1")
        found.append([tuple(row) for row in rows])
    return found


def answered(page: str) -> str:
    """What the page says the action answered (the `#said` box), as markup."""
    start = page.index('<div id="said"')
    return unescape(page[start : page.index("</div>", start)])


def done(page: str) -> list[str]:
    """The lines of the `#said` box that say something was done, as text."""
    return [unescape(line) for line in re.findall(r'<p class="done">(.*?)</p>', answered(page))]


async def said_in_rooms(site: OwnerSite, slug: str, before: int) -> str:
    """The one line the rooms were told since `before` rows: the same in each room,
    linked to the card, no reply to a message the rooms never saw."""
    card = await site.board.reads.card(slug)
    rows = (await outbox(site))[before:]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("xmpp", ROOM.room, "room"),
        ("console", CONSOLE.room, "person"),
    ]
    assert {(r[4], r[5], r[6]) for r in rows} == {("web", card.id, None)}
    assert rows[0][3] == rows[1][3]
    return rows[0][3]


async def test_a_start_deploy_and_answer_from_the_page_are_said_in_the_rooms(
    site: OwnerSite,
) -> None:
    cookie = await site.sign_in()
    assert await outbox(site) == []
    page = await site.act(cookie, "plain-0", "start")
    assert (await site.board.reads.card("plain-0")).phase is Phase.OPERATOR_RUNNING
    line = "plain-0: /start — planned → operator running. operator run queued."
    assert done(page) == [line]  # the page shows chat's answer as it is
    assert await said_in_rooms(site, "plain-0", 0) == SAID + line

    reviewed = await site.board.reads.card("reviewed")
    await site.act(cookie, "reviewed", "deploy")
    deploy = f"reviewed: deployment of {reviewed.commit_hash[:12]} queued."
    assert await said_in_rooms(site, "reviewed", 2) == SAID + deploy
    assert ("deploy", VIA_WEB) in [
        (e.action, e.actor) for e in (await site.board.reads.view("reviewed")).events
    ]

    page = await site.act(cookie, "asks", "answer", option="1")
    assert (await site.board.reads.card("asks")).phase is Phase.OPERATOR_RUNNING
    [line] = done(page)
    assert line.startswith("Answer recorded for asks")
    assert await said_in_rooms(site, "asks", 4) == SAID + line


async def test_a_refused_or_a_strangers_action_says_nothing_in_the_rooms(
    site: OwnerSite,
) -> None:
    cookie = await site.sign_in()
    before = await snapshot(site)
    # The phase refuses it: the page says why, the rooms hear nothing, nothing changed.
    page = await site.act(cookie, "plain-0", "deploy")
    assert "Refused: plain-0 is in phase planned" in answered(page)
    # A steer with no run to talk to, an answer where no question is open.
    await site.act(cookie, "plain-0", "steer", text="faster")
    await site.act(cookie, "plain-0", "answer", text="yes")
    # Signed in, but no owner (any more): refused before anything runs.
    stranger = await site.sign_in("xmpp:stranger@localhost")
    page = await site.act(stranger, "plain-1", "start")
    assert "Only an owner acts from the web board" in answered(page)
    assert await snapshot(site) == before
    assert await outbox(site) == []


# --- a new card from the board page ---------------------------------------------------


async def board_page(site: OwnerSite, cookie: str) -> str:
    status, _, page = await site.request("GET", "", headers=owner(cookie))
    assert status == 200
    return page


async def test_an_owners_board_has_the_new_card_form_and_a_readers_has_none(
    site: OwnerSite,
) -> None:
    cookie = await site.sign_in()
    page = await board_page(site, cookie)
    form = page[page.index('<details id="new-card">') : page.index("</details>")]
    assert '<form method="post" action="/draft"' in form
    csrf = CSRF.search(form)
    assert csrf is not None and csrf.group(1) == CSRF.search(page).group(1)
    assert 'name="text"' in form and "New card" in form and "Start the draft" in form
    status, _, read = await site.request("GET", "", headers=site.headers())
    assert status == 200 and "Signed in as" not in read
    assert 'id="new-card"' not in read and 'action="/draft"' not in read


async def test_a_draft_from_the_board_goes_through_draft_and_is_said_in_the_rooms(
    site: OwnerSite,
) -> None:
    cookie = await site.sign_in()
    csrf = CSRF.search(await board_page(site, cookie)).group(1)
    status, headers, _ = await site.request(
        "POST", "draft", headers=owner(cookie), data={"csrf": csrf, "text": "add a dark mode"}
    )
    assert status == 303 and headers["Location"] == "/"
    card = await site.board.reads.card("draft-1")
    assert (card.kind, card.phase, card.title) == (
        Kind.DRAFT,
        Phase.DRAFT_RUNNING,
        "add a dark mode",
    )
    # Its questions go where every card's notices go: the page is no chat to ask in.
    assert card.data.origin is None
    view = await site.board.reads.view("draft-1")
    assert [(e.action, e.actor) for e in view.events] == [("draft", VIA_WEB)]
    assert view.active_job is not None and view.active_job.kind == "planner"
    line = "Draft draft-1 started; the planner is on it. Reply to its questions to go on."
    assert done(await board_page(site, cookie)) == [line]
    assert await said_in_rooms(site, "draft-1", 0) == SAID + line


async def test_a_draft_without_session_csrf_or_words_changes_nothing(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    csrf = CSRF.search(await board_page(site, cookie)).group(1)
    before = await snapshot(site)
    for headers, data, status_wanted, key in (
        # The board's token reads; it does not act.
        (site.headers(), {"csrf": csrf, "text": "x"}, 403, "token only reads"),
        # Nothing at all: not even let in.
        ({}, {"csrf": csrf, "text": "x"}, 401, "/web"),
        (owner(cookie), {"text": "x"}, 403, "not one of your session"),
        (owner(cookie), {"csrf": csrf[:-2] + "xx", "text": "x"}, 403, "not one of your session"),
    ):
        status, _, body = await site.request("POST", "draft", headers=headers, data=data)
        assert status == status_wanted, (headers, data)
        assert key in body, body
    # With the session and its token, but no words or too many: chat's usage answer.
    for text in ("", "   ", "x" * 4001):
        status, _, _ = await site.request(
            "POST", "draft", headers=owner(cookie), data={"csrf": csrf, "text": text}
        )
        assert status == 303
        said = answered(await board_page(site, cookie))
        assert 'class="refused"' in said and "/draft" in said, said
    assert await snapshot(site) == before


async def test_the_room_hears_it_in_german(tmp_path: Path) -> None:
    site = await open_owner_site(tmp_path, locale="de", rooms=[ROOM])
    try:
        cookie = await site.sign_in()
        page = await board_page(site, cookie)
        assert "Neue Karte" in page and "Entwurf beginnen" in page
        await site.act(cookie, "plain-0", "start")
        [row] = await outbox(site)
        assert row[3].startswith("🌐 owner@localhost über das Web-Board: plain-0: /start")
    finally:
        await site.close()
