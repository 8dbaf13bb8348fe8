"""A board that grows: capped groups with their counts, and `/cards` (search and pages)."""

from __future__ import annotations

import re
from html import unescape

from chatbot.board.card_lists import MAX_QUERY
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.web.cards_page import PER_PAGE
from chatbot.web.groups import SHOWN, Group
from tests.web.boards import HOSTILE_TITLE, OWNER, many
from tests.web.conftest import open_site
from tests.web.test_http import Stream, fetch


def column(body: str, group: str) -> list[str]:
    """The slugs a column shows, top to bottom."""
    found = re.search(rf'<ul class="cards" id="col-{group}"[^>]*>(.*?)</ul>', body, re.S)
    assert found, group
    return re.findall(r'<li class="card[^"]*" id="card-([a-z0-9-]+)"', found.group(1))


def count(body: str, group: str) -> int:
    return int(re.search(rf'id="count-{group}">(\d+)<', body).group(1))


def results(body: str) -> list[str]:
    found = re.search(r'<ul class="cards listing" id="results">(.*?)</ul>', body, re.S)
    return re.findall(r'id="card-([a-z0-9-]+)"', found.group(1)) if found else []


def link(body: str, rel: str) -> str | None:
    found = re.search(rf'<a rel="{rel}" href="/([^"]+)"', body)
    return unescape(found.group(1)) if found else None


async def test_done_and_archived_show_their_count_and_most_recent_cards(site) -> None:
    deployed = await many(site.store, Phase.DEPLOYED, 30, "shipped")
    archived = await many(site.store, Phase.ARCHIVED, 25, "shelved")
    failed = await many(site.store, Phase.FAILED, 60, "broke")
    _, _, body = await fetch(site, "", headers=site.headers())
    # done: 30 deployed and the seeded research card; archived: 25 and the seeded one.
    assert count(body, "done") == 31 and count(body, "archived") == 26
    assert column(body, "done") == deployed[::-1][: SHOWN[Group.DONE]]
    assert column(body, "archived") == archived[::-1][: SHOWN[Group.ARCHIVED]]
    assert '<a class="more" href="/cards?group=done">' in body
    assert '<a class="more" href="/cards?group=archived">' in body
    # waiting for you shows every card, however many.
    assert count(body, "waiting") == 62
    assert set(column(body, "waiting")) == {*failed, "asks", "reviewed"}
    assert re.search(r'id="total"[^>]*>(\d+) cards<', body).group(1) == str(
        len(site.seeded.groups) + 30 + 25 + 60
    )
    assert '<a class="more" href="/cards?group=waiting" hidden>' in body
    # ...up to a bound that only a board gone wrong reaches: then its most recent.
    failed += await many(site.store, Phase.FAILED, SHOWN[Group.WAITING], "again")
    _, _, body = await fetch(site, "", headers=site.headers())
    assert count(body, "waiting") == 62 + SHOWN[Group.WAITING]
    assert column(body, "waiting") == failed[::-1][: SHOWN[Group.WAITING]]
    assert '<a class="more" href="/cards?group=waiting">' in body


async def test_search_finds_by_slug_and_by_title_in_any_case(site) -> None:
    _, _, body = await fetch(site, "cards?q=plain-1", headers=site.headers())
    assert results(body) == ["plain-1"]
    _, _, body = await fetch(site, "cards?q=HELLO+Endpoint", headers=site.headers())
    assert results(body) == ["reviewed"]
    # A group narrows it: "card" is in every plain card's title, none of them done.
    _, _, body = await fetch(site, "cards?q=plain+card&group=planned", headers=site.headers())
    assert sorted(results(body)) == ["plain-0", "plain-1", "plain-2"]
    _, _, body = await fetch(site, "cards?q=plain+card&group=done", headers=site.headers())
    assert results(body) == []
    # The form keeps what was asked, and works as a plain GET form.
    assert 'method="get" action="/cards"' in body
    assert 'value="plain card"' in body and '<option value="done" selected>' in body


async def test_an_empty_search_says_so(site) -> None:
    status, _, body = await fetch(site, "cards?q=no-such-thing", headers=site.headers())
    assert status == 200 and results(body) == []
    assert "No card's slug or title holds “no-such-thing”." in unescape(body)


async def test_pages_go_on_without_gaps_or_repeats_and_come_back(site) -> None:
    deployed = await many(site.store, Phase.DEPLOYED, 2 * PER_PAGE + 7, "shipped")
    newest_first = deployed[::-1] + ["queues"]  # the seeded research card is older
    _, _, first = await fetch(site, "cards?group=done", headers=site.headers())
    assert "Done: 108 cards" in first
    assert results(first) == newest_first[:PER_PAGE] and link(first, "prev") is None
    _, _, second = await fetch(site, link(first, "next"), headers=site.headers())
    assert results(second) == newest_first[PER_PAGE : 2 * PER_PAGE]
    _, _, third = await fetch(site, link(second, "next"), headers=site.headers())
    assert results(third) == newest_first[2 * PER_PAGE :] and link(third, "next") is None
    _, _, back = await fetch(site, link(third, "prev"), headers=site.headers())
    assert results(back) == results(second)
    _, _, back = await fetch(site, link(back, "prev"), headers=site.headers())
    assert results(back) == results(first) and link(back, "prev") is None
    # A search pages the same way, and its links keep the search and the group.
    seen = []
    page = "cards?q=CARD&group=done"
    while page:
        _, _, found = await fetch(site, page, headers=site.headers())
        seen += results(found)
        page = link(found, "next")
        assert page is None or ("q=CARD" in page and "group=done" in page)
    assert seen == deployed[::-1]


async def test_percent_and_underscore_in_a_search_match_only_themselves(site) -> None:
    await many(site.store, Phase.DEPLOYED, 1, "percent", title="Reach 100% coverage")
    await many(site.store, Phase.DEPLOYED, 1, "plain", title="Reach 100 users")
    await many(site.store, Phase.DEPLOYED, 1, "under", title="Rename a_b")
    await many(site.store, Phase.DEPLOYED, 1, "other", title="Rename axb")
    await many(site.store, Phase.DEPLOYED, 1, "slash", title="Back\\slash")
    for q, expected in (
        ("100%25", ["percent-000"]),
        ("%25", ["percent-000"]),
        ("a_b", ["under-000"]),
        ("_", ["under-000"]),
        ("%5C", ["slash-000"]),
    ):
        _, _, body = await fetch(site, f"cards?q={q}", headers=site.headers())
        assert results(body) == expected, q


async def test_a_search_text_and_its_results_are_escaped(site) -> None:
    status, _, body = await fetch(site, "cards?q=<img+src%3Dx", headers=site.headers())
    assert status == 200 and results(body) == ["hostile"]
    assert "<img" not in body
    assert unescape(re.search(r'<span class="title">(.*?)</span>', body).group(1)) == HOSTILE_TITLE
    assert 'value="&lt;img src=x"' in body


async def test_an_over_long_search_or_a_bad_address_is_refused_in_one_line(site) -> None:
    long = "x" * (MAX_QUERY + 1)
    status, _, body = await fetch(site, f"cards?q={long}", headers=site.headers())
    assert status == 400
    assert f"The search text is {MAX_QUERY + 1} characters long; at most {MAX_QUERY}" in body
    assert "Traceback" not in body and long not in body
    status, _, body = await fetch(site, "cards?q=" + "x" * MAX_QUERY, headers=site.headers())
    assert status == 200
    status, _, body = await fetch(site, "cards?group=<b>nope", headers=site.headers())
    assert status == 400 and "&lt;b&gt;nope" in body and "<b>" not in body
    assert "There is no group '<b>nope'; use one of: planned" in unescape(body)
    for key in ("after", "before"):
        for value in ("nan_1", "1.5", "x_y", "1.5_", "1_0_1", "1.5_" + "9" * 19, "1e999_1"):
            status, _, body = await fetch(site, f"cards?{key}={value}", headers=site.headers())
            assert status == 400 and f"This page address is damaged ({key})" in body, value
    status, _, body = await fetch(site, "cards?q=plain%00-1", headers=site.headers())
    assert status == 200 and results(body) == ["plain-1"]
    status, _, _ = await fetch(site, "cards?q=plain")
    assert status == 401  # the search needs the token as every page does


async def test_german_labels(tmp_path) -> None:
    site = await open_site(tmp_path, locale="de", planned=1)
    try:
        await many(site.store, Phase.ARCHIVED, SHOWN[Group.ARCHIVED], "shelved")
        _, _, board = await fetch(site, "", headers=site.headers())
        assert "Archiviert" in board and "Alle, und suchen" in board
        _, _, body = await fetch(site, "cards?q=nichts-da", headers=site.headers())
        assert "Slug oder Titel" in body and "Suchen</button>" in body and "alle Gruppen" in body
        assert "Kein Slug und kein Titel enthält „nichts-da“." in unescape(body)
        _, _, body = await fetch(site, "cards?group=done", headers=site.headers())
        assert "Erledigt: 1 Karte<" in body  # issue 34: "1 Karten"
        status, _, body = await fetch(site, "cards?q=" + "x" * 101, headers=site.headers())
        assert status == 400 and "Der Suchtext ist 101 Zeichen lang" in body
    finally:
        await site.web.stop()
        await site.store.close()


async def test_a_stream_event_carries_the_changed_cards_and_the_group_counts(site) -> None:
    import aiohttp

    await many(site.store, Phase.DEPLOYED, 30, "shipped")
    mark = (await site.board.web.change_mark()).token()
    async with aiohttp.ClientSession(headers=site.headers()) as http:
        response = await http.get(f"{site.url}events?view=board&since={mark}")
        stream = Stream(response)
        await site.board.apply("reviewed", Action.DEPLOY_SUCCEEDED, reason="deployed")
        event = await stream.next()
        assert [(c["slug"], c["group"]) for c in event["cards"]] == [("reviewed", "done")]
        assert event["counts"]["done"] == 32 and event["counts"]["ready"] == 0
        assert event["counts"]["planned"] == 4
        await site.board.act("plain-0", Action.ARCHIVE, actor=OWNER)
        event = await stream.next()
        assert [c["slug"] for c in event["cards"]] == ["plain-0"]
        assert event["counts"]["planned"] == 3 and event["counts"]["archived"] == 2
        response.close()
