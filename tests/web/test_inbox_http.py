"""A signed-in owner's inbox on the board page over plain HTTP: exactly what /inbox lists,
one line each with the buttons that resolve it (they name the page's one owner form),
and acting from it (approve, accept and decline a request, deploy) through chat's own
handlers, back to the board. A reader's page has no inbox; a form with another
session's CSRF token or with the board's token only is refused and changes nothing."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

from chatbot.board import inbox as board_inbox
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.web import inbox_section
from tests.board.test_inbox_why import one_of_each
from tests.web.boards import HOSTILE_TITLE
from tests.web.owners import OwnerSite, open_owner_site, owner
from tests.web.test_owners_http import VIA_WEB, history, snapshot
from tests.web.test_waiting_http import OWNER_FORM

REQUESTER = "xmpp:req@localhost"


# The `site` fixture (tests/web/conftest.py) is a board whose owners sign in and act.
OWNERS = True


def inbox_html(page: str) -> str:
    found = re.search(r'<section id="inbox".*?</section>', page)
    assert found is not None
    return found.group(0)


def lines(page: str) -> list[str]:
    return re.findall(r'<li class="inbox-[a-z_]+">.*?</li>', inbox_html(page))


def line_of(page: str, kind: str, slug: str | None = None) -> str:
    for line in lines(page):
        if f'class="inbox-{kind}"' in line and (slug is None or f'href="/card/{slug}"' in line):
            return line
    raise AssertionError(f"no {kind} line for {slug}")


def buttons(html: str) -> list[tuple[str, str, str]]:
    """(formaction, action, label) of every button, in order."""
    return [
        (unescape(to), value, unescape(label))
        for to, value, label in re.findall(
            r'<button (?:class="opt" )?form="owner-act" formaction="([^"]+)" name="action" '
            r'value="([a-z]+)">(.*?)</button>',
            html,
        )
    ]


async def owner_page(site: OwnerSite, cookie: str) -> str:
    status, _, page = await site.request("GET", "", headers=owner(cookie))
    assert status == 200
    return page


async def press(site: OwnerSite, cookie: str, page: str, formaction: str, action: str):
    """What a browser sends for an inbox button: the owner form's fields and the button's."""
    csrf = OWNER_FORM.search(page).group(1)
    return await site.request(
        "POST",
        formaction.lstrip("/"),
        headers=owner(cookie),
        data={"csrf": csrf, "back": "board", "action": action},
    )


async def test_one_line_per_inbox_item_with_the_buttons_that_resolve_it(site: OwnerSite) -> None:
    await one_of_each(site.board)
    cookie = await site.sign_in()
    page = await owner_page(site, cookie)
    # Outside the live part, after the one owner form.
    assert page.index('id="owner-act"') < page.index('id="inbox"') < page.index('id="main"')
    items = await board_inbox.inbox(site.board)
    found = lines(page)
    assert len(found) == len(items) and len(items) >= 9
    for item, line in zip(items, found, strict=True):  # oldest first, as /inbox
        assert f'class="inbox-{item.kind}"' in line
        if item.slug:
            assert f'<a class="slug" href="/card/{item.slug}">' in line
    card = "/card/{}/act"
    request = next(i for i in items if i.kind == "request").request_id
    expected = {
        ("question", "asked"): [],  # no options: the link to answer in words only
        ("request", None): [
            (f"/request/{request}/act", "accept", "Accept"),
            (f"/request/{request}/act", "decline", "Decline"),
        ],
        ("budget", "costly"): [(card.format("costly"), "retry", "Retry")],
        ("approval", "asking"): [(card.format("asking"), "approve", "Allow once")],
        ("interrupted", "paused"): [
            (card.format("paused"), "fix", "Fix"),
            (card.format("paused"), "cancel", "Cancel"),
        ],
        ("deploy", "approved"): [(card.format("approved"), "deploy", "Deploy")],
        ("failed", "broken"): [
            (card.format("broken"), "retry", "Retry"),
            (card.format("broken"), "fix", "Fix"),
        ],
        ("split_plan", "report"): [(card.format("report"), "confirm", "Confirm the plan")],
        ("quota", "limited"): [(card.format("limited"), "cancel", "Cancel")],
        # The seeded board's own: a question with options, an approved card.
        ("question", "asks"): [
            (card.format("asks") + "?option=1", "answer", "SQLite"),
            (
                card.format("asks") + "?option=2",
                "answer",
                f"PostgreSQL {HOSTILE_TITLE}",
            ),
        ],
        ("deploy", "reviewed"): [(card.format("reviewed"), "deploy", "Deploy")],
    }
    for (kind, slug), wanted in expected.items():
        assert buttons(line_of(page, kind, slug)) == wanted, (kind, slug)
    words = {
        ("question", "asked"): '<a href="/card/asked#act">Answer in words…</a>',
        ("approval", "asking"): '<a href="/card/asking#act">Deny with a reason…</a>',
        ("interrupted", "paused"): '<a href="/card/paused#act">Steer…</a>',
        ("split_plan", "report"): '<a href="/card/report#act">Answer in words…</a>',
    }
    for (kind, slug), link in words.items():
        assert link in line_of(page, kind, slug), (kind, slug)
    # What the page cannot run is the command to write in chat.
    assert "in chat: <code>/allow costly</code>" in line_of(page, "budget", "costly")
    # The agent's and the requester's commands are inert code; hostile text stays text.
    assert "its agent asks to run: <code>rm -rf build</code>" in line_of(page, "approval")
    assert "Request #1 by xmpp:req@example.org: <code>/start wish</code>" in unescape(
        line_of(page, "request")
    )
    assert "<img src=x" not in inbox_html(page) and "&lt;img src=x" in inbox_html(page)
    assert "Which database?" in line_of(page, "question", "asked")
    assert "part-a, part-b" in line_of(page, "split_plan")
    assert "reload for the latest" in inbox_html(page)


async def test_an_empty_inbox_and_a_capped_one(site: OwnerSite) -> None:
    for slug in ("asks", "reviewed"):
        await site.board.act(slug, Action.ARCHIVE, actor="t")
    cookie = await site.sign_in()
    section = inbox_html(await owner_page(site, cookie))
    assert '<p class="none">Nothing waits for you.</p>' in section and "<li" not in section
    async with site.store.transaction() as db:
        for n in range(inbox_section.SHOWN + 3):
            await chat_store.add_request(db, REQUESTER, "xmpp", "draft", f"idea {n}")
    page = await owner_page(site, cookie)
    assert len(lines(page)) == inbox_section.SHOWN
    assert "and 3 more: /inbox in chat" in inbox_html(page)
    assert "idea 0<" in inbox_html(page) and f"idea {inbox_section.SHOWN}<" not in page


async def test_more_items_than_the_section_shows(site: OwnerSite) -> None:
    """The page reads only the items it shows: they are the oldest of the whole inbox,
    of every kind, and the heading counts them all."""
    await one_of_each(site.board)
    async with site.store.transaction() as db:
        for n in range(inbox_section.SHOWN):
            failed = await card_store.create(
                db, f"failed-{n}", Kind.INTENT, Phase.FAILED, actor="t", failure_stage="builder"
            )
            asks = await card_store.create(
                db, f"asks-{n}", Kind.INTENT, Phase.NEEDS_HUMAN, actor="t"
            )
            await question_store.ask(db, asks.id, "operator", f"question {n}?", [])
            await chat_store.add_request(db, REQUESTER, "xmpp", "draft", f"idea {n}")
            if n % 3 == 0:  # a time several share: the slug orders them
                await db.execute("UPDATE cards SET updated_at = 1.0 WHERE id = ?", (failed.id,))
    items = await board_inbox.inbox(site.board)
    assert len(items) > inbox_section.SHOWN + 100
    cookie = await site.sign_in()
    page = await owner_page(site, cookie)
    section = inbox_html(page)
    assert f'<span class="count">{len(items)}</span>' in section
    more = len(items) - inbox_section.SHOWN
    assert f"and {more} more: /inbox in chat" in section
    found = lines(page)
    assert len(found) == inbox_section.SHOWN
    for item, line in zip(items, found, strict=False):  # the oldest, in /inbox's order
        assert f'class="inbox-{item.kind}"' in line
        if item.slug:
            assert f'<a class="slug" href="/card/{item.slug}">' in line
        if item.request_id is not None:
            assert f"/request/{item.request_id}/act" in line
    assert 'href="/card/failed-0"' in found[0] and 'href="/card/failed-12"' in found[1]


async def test_approving_an_agents_request_from_the_board(site: OwnerSite) -> None:
    card = await site.board.reads.card("building")  # its builder runs
    job = (await site.board.reads.view("building")).active_job
    await site.board.talk.begins(job)
    asked = await site.board.talk.ask_approval(job, card, tool="Bash", command="curl x", cwd="/w")
    cookie = await site.sign_in()
    page = await owner_page(site, cookie)
    line = line_of(page, "approval", "building")
    assert "<code>curl x</code>" in line
    [(to, action, _)] = buttons(line)
    status, headers, _ = await press(site, cookie, page, to, action)
    assert (status, headers["Location"]) == (303, "/")
    decided = await site.board.talk.approval(asked.id)
    assert (decided.state, decided.actor) == ("allowed", VIA_WEB)
    page = await owner_page(site, cookie)
    assert 'class="inbox-approval"' not in inbox_html(page)
    said = unescape(re.search(r"<div id=\"said\" role=\"status\">.*?</div>", page, re.S).group(0))
    assert 'class="done"' in said and "building: allowed once" in said


async def test_accept_and_decline_requests_with_and_without_a_card(site: OwnerSite) -> None:
    async with site.board.transaction() as tx:
        start = await tx.add_request(REQUESTER, "xmpp", "start", "plain-1")
        draft = await tx.add_request(REQUESTER, "xmpp", "draft", "a greeting <b>page</b>")
        other = await tx.add_request(REQUESTER, "xmpp", "start", "plain-2")
    cookie = await site.sign_in()
    page = await owner_page(site, cookie)
    assert "<code>/draft a greeting &lt;b&gt;page&lt;/b&gt;</code>" in inbox_html(page)
    for request, action in ((start, "accept"), (draft, "accept"), (other, "decline")):
        status, headers, _ = await press(site, cookie, page, f"/request/{request.id}/act", action)
        assert (status, headers["Location"]) == (303, "/"), request
    assert (await site.board.reads.request(start.id)).state == "accepted"
    assert (await site.board.reads.card("plain-1")).phase is Phase.OPERATOR_RUNNING
    assert ("start", VIA_WEB) in await history(site, "plain-1")
    assert (await site.board.reads.request(draft.id)).state == "accepted"
    jobs = await job_store.listing(site.store.reader)
    assert any(j.kind == "planner" for j in jobs)  # the draft's intake dialogue began
    assert (await site.board.reads.request(other.id)).state == "declined"
    assert (await site.board.reads.card("plain-2")).phase is Phase.PLANNED
    page = await owner_page(site, cookie)
    assert 'class="inbox-request"' not in inbox_html(page)
    said = unescape(re.search(r"<div id=\"said\" role=\"status\">.*?</div>", page, re.S).group(0))
    assert f"Request #{other.id} declined by {VIA_WEB}." in said
    # Decided already: chat's own answer, nothing changes.
    before = await snapshot(site)
    await press(site, cookie, page, f"/request/{start.id}/act", "decline")
    assert (await site.board.reads.request(start.id)).state == "accepted"
    assert (await snapshot(site))[:4] == before[:4]
    # Only accept and decline go to a request's address.
    async with site.board.transaction() as tx:
        waiting = await tx.add_request(REQUESTER, "xmpp", "start", "plain-3")
    before = await snapshot(site)
    status, _, _ = await press(site, cookie, page, f"/request/{waiting.id}/act", "archive")
    assert status == 303 and await snapshot(site) == before
    page = await owner_page(site, cookie)
    assert "can only be accepted or declined here" in unescape(page)


async def test_deploy_from_the_inbox(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    page = await owner_page(site, cookie)
    [(to, action, _)] = buttons(line_of(page, "deploy", "reviewed"))
    status, headers, _ = await press(site, cookie, page, to, action)
    assert (status, headers["Location"]) == (303, "/")
    reviewed = await site.board.reads.card("reviewed")
    jobs = await job_store.listing(site.store.reader)
    assert any(j.kind == "deploy" and j.card_id == reviewed.id for j in jobs)
    assert ("deploy", VIA_WEB) in await history(site, "reviewed")


async def test_a_reader_has_no_inbox_and_foreign_forms_change_nothing(site: OwnerSite) -> None:
    await one_of_each(site.board)
    status, _, page = await site.request("GET", "", headers=site.headers())
    assert status == 200 and 'id="inbox"' not in page and "Nothing waits" not in page
    assert "/request/" not in page and "rm -rf build" not in page
    mine, theirs = await site.sign_in(), await site.sign_in()
    their_page = await owner_page(site, theirs)
    their_csrf = OWNER_FORM.search(their_page).group(1)
    before = await snapshot(site)
    for path, action in (("/request/1/act", "accept"), ("/card/asking/act", "approve")):
        data = {"csrf": their_csrf, "back": "board", "action": action}
        status, _, body = await site.request(
            "POST", path.lstrip("/"), headers=owner(mine), data=data
        )
        assert status == 403 and "not one of your session" in unescape(body), path
        # The board's token only reads, even with an owner's CSRF token.
        status, _, body = await site.request(
            "POST", path.lstrip("/"), headers=site.headers(), data=data
        )
        assert status == 403 and "Only an owner signed in with /web" in unescape(body), path
    assert await snapshot(site) == before


async def test_the_inbox_in_german(tmp_path: Path) -> None:
    german = await open_owner_site(tmp_path, locale="de")
    try:
        for slug in ("asks", "reviewed"):
            await german.board.act(slug, Action.ARCHIVE, actor="t")
        cookie = await german.sign_in()
        section = inbox_html(await owner_page(german, cookie))
        assert '<p class="none">Nichts wartet auf dich.</p>' in section
        await one_of_each(german.board)
        section = unescape(inbox_html(await owner_page(german, cookie)))
        assert "Dein Eingang" in section and "ihr Agent bittet, auszuführen:" in section
        assert ">Mit Begründung ablehnen …</a>" in section and ">Annehmen</button>" in section
        assert "im Chat: <code>/allow costly</code>" in section
    finally:
        await german.close()
