"""The board tells the truth (issue 35): "Waiting for you" holds exactly what the owner's
inbox lists, counted as the inbox counts it, on the page, in /cards and in the live
events; and a split parent says it waits for its children, on the board and its page."""

from __future__ import annotations

import re
from html import unescape

import aiohttp

from chatbot.board import inbox as board_inbox
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from tests.board.test_inbox_why import one_of_each
from tests.web.boards import OWNER
from tests.web.owners import OwnerSite, owner
from tests.web.test_cards import column, count, results
from tests.web.test_http import Stream
from tests.web.test_waiting_http import card_html

# The `site` fixture (tests/web/conftest.py) is a board whose owners sign in and act.
OWNERS = True
GROUPS = ("planned", "working", "waiting", "review", "ready", "done", "archived")


async def more_cards(site: OwnerSite) -> None:
    """Cards that look as if they waited and do not: a split parent waiting for its
    children (one deployed, one approved, one building) and a card its reviewer sent back."""
    async with site.store.transaction() as db:
        parent = await card_store.create(
            db, "big", Kind.INTENT, Phase.SPLIT, actor="t", title="Big", lane="light"
        )
        for slug, phase in (
            ("big-a", Phase.DEPLOYED),
            ("big-b", Phase.READY_FOR_DEPLOYMENT),  # done where no deploy command runs
            ("big-c", Phase.BUILDING),
        ):
            await card_store.create(
                db, slug, Kind.INTENT, phase, actor="t", title=slug, parent_id=parent.id
            )
        await card_store.create(
            db, "sent-back", Kind.INTENT, Phase.PLANNING_WITH_FEEDBACK, actor="t", title="Again"
        )


async def test_waiting_for_you_holds_what_the_inbox_lists(site: OwnerSite) -> None:
    await one_of_each(site.board)
    await more_cards(site)
    items = await board_inbox.inbox(site.board)
    kinds = {item.kind for item in items}
    # Every kind that is about a card (a routine that paused itself names none).
    every = {v for k, v in vars(board_inbox.InboxKind).items() if not k.startswith("_")}
    assert kinds == every - {board_inbox.InboxKind.ROUTINE}
    listed = {item.slug for item in items if item.slug}
    # Before: an approved card waiting for /deploy sat under "Ready", one whose agent
    # asks or whose run waits for the provider's quota under "Working".
    assert {"approved", "reviewed", "asking", "limited"} <= listed
    cookie = await site.sign_in()
    for headers in (site.headers(), owner(cookie)):  # a reader's page and an owner's
        _, _, body = await site.request("GET", "", headers=headers)
        assert count(body, "waiting") == len(items) == 12
        assert set(column(body, "waiting")) == listed
        for group in GROUPS:
            if group != "waiting":
                assert not set(column(body, group)) & listed, group
        # The request is no card: the column says how many, never whose or what.
        requests = re.search(r'<p class="requests" id="requests">(.*?)</p>', body).group(1)
        assert unescape(requests).startswith("Requests waiting for an owner: 1 ")
        assert "req@example.org" not in body[body.index('<main id="main">') :]
        assert column(body, "planned")[0] == "sent-back" and "big" in column(body, "working")
        total = re.search(r'id="total"[^>]*>(\d+) cards<', body).group(1)
        cards = sum(count(body, group) for group in GROUPS if group != "waiting")
        assert int(total) == cards + len(listed)
    # The owner's inbox above the board counts the same.
    inbox = re.search(r'<h2 id="h-inbox">Your inbox <span class="count">(\d+)<', body)
    assert int(inbox.group(1)) == len(items)
    # /cards agrees: waiting is the inbox's cards, ready only what does not wait.
    _, _, found = await site.request("GET", "cards?group=waiting", headers=site.headers())
    assert set(results(found)) == listed
    _, _, found = await site.request("GET", "cards?group=ready", headers=site.headers())
    assert results(found) == ["big-b"]


async def test_live_events_move_cards_in_and_out_of_waiting(site: OwnerSite) -> None:
    await one_of_each(site.board)
    mark = (await site.board.web.change_mark()).token()
    async with aiohttp.ClientSession(headers=site.headers()) as http:
        response = await http.get(f"{site.url}events?view=board&since={mark}")
        stream = Stream(response)
        # Its failed review retried, the run is queued: nothing waits for an owner there.
        await site.board.act("broken", Action.RETRY, actor=OWNER)
        event = await stream.next()
        assert [(c["slug"], c["group"]) for c in event["cards"]] == [("broken", "review")]
        assert event["counts"]["waiting"] == len(await board_inbox.inbox(site.board)) == 11
        assert "requests" not in event  # unchanged
        # A new request is no card: the column's line about requests comes again.
        async with site.store.transaction() as db:
            await chat_store.add_request(db, "xmpp:other@example.org", "xmpp", "draft", "idea")
        event = await stream.next()
        assert event["cards"] == [] and event["counts"]["waiting"] == 12
        assert "Requests waiting for an owner: 2 " in unescape(event["requests"])
        assert "other@example.org" not in event["requests"]
        # /deploy queues its deployment: it waits for nobody now, and is ready.
        await site.board.act("reviewed", Action.DEPLOY, actor=OWNER)
        event = await stream.next()
        assert [(c["slug"], c["group"]) for c in event["cards"]] == [("reviewed", "ready")]
        items = await board_inbox.inbox(site.board)
        assert event["counts"]["waiting"] == len(items) == 11 and event["counts"]["ready"] == 1
        waiting_cards = len({item.slug for item in items if item.slug})
        others = sum(n for group, n in event["counts"].items() if group != "waiting")
        assert event["total"] == others + waiting_cards
        response.close()


async def test_a_split_parent_says_it_waits_for_its_children(site: OwnerSite) -> None:
    await more_cards(site)
    _, _, body = await site.request("GET", "", headers=site.headers())
    parent = unescape(card_html(body, "big"))
    assert "split · waits for its children: 2 of 3 done · lane light" in parent
    _, _, page = await site.request("GET", "card/big", headers=site.headers())
    facts = unescape(re.search(r'<p class="facts" id="facts">(.*?)</p>', page).group(1))
    assert facts.startswith("intent · split · waits for its children: 2 of 3 done")
    # A child is not a parent: no such words.
    _, _, page = await site.request("GET", "card/big-c", headers=site.headers())
    assert "waits for its children" not in page
