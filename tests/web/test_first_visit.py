"""What a first visitor meets on the web board (issue 35's small items): the 401 and
sign-in pages in the board's own look and naming /web, the stylesheet open to all but
nothing else, the search in the navigation, a reader told how an owner signs in, and a
chart of free runs that does not invent a cost scale."""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path

import aiohttp

from chatbot.board.web_reads import DayRuns
from chatbot.web.chart import runs_chart
from chatbot.web.texts import Texts
from tests.web.owners import open_owner_site, owner

STYLE = '<link rel="stylesheet" href="/static/board.css">'


async def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as http:
        async with http.get(url, headers=headers or {}, allow_redirects=False) as response:
            return response.status, await response.text(), response.content_type


async def test_a_stranger_meets_the_boards_look_and_the_way_in(tmp_path: Path) -> None:
    site = await open_owner_site(tmp_path)
    try:
        status, page, _ = await get(site.url)
        assert status == 401 and STYLE in page
        assert "write /web to the bot in a direct chat" in page
        assert "admin" not in page.lower()
        # The stylesheet and the icon hold nothing of the board: anyone loads them.
        assert (await get(f"{site.url}static/board.css"))[::2] == (200, "text/css")
        assert (await get(f"{site.url}static/icon.svg"))[0] == 200
        # Everything else still needs a credential: the script, the pages, the events.
        for path in ("static/board.js", "cards", "card/x", "events"):
            assert (await get(f"{site.url}{path}"))[0] == 401, path
        # A sign-in page (here: of a link that does not exist) looks like the board too.
        status, page, _ = await get(f"{site.url}signin/not-a-link")
        assert status == 404 and STYLE in page and "<script" not in page
    finally:
        await site.close()


async def test_a_reader_is_told_how_owners_sign_in_and_an_owner_is_not(tmp_path: Path) -> None:
    site = await open_owner_site(tmp_path)
    try:
        _, reader, _ = await get(site.url, site.headers())
        assert 'id="readers"' in reader and "write /web to the bot" in reader
        assert '<a href="/cards">Search</a>' in reader
        cookie = await site.sign_in()
        _, owners_page, _ = await get(site.url, owner(cookie))
        assert 'id="readers"' not in owners_page
        assert '<a href="/cards">Search</a>' in owners_page
    finally:
        await site.close()


def test_a_chart_of_free_runs_says_zero_dollars() -> None:
    # It said $0.010 on its cost axis when every run cost nothing.
    today = date.today().isoformat()
    chart = runs_chart([DayRuns(today, 3, 0.0)], 14, Texts("en"), time.time())
    assert "$0.010" not in chart and ">$0.00<" in chart
    paid = runs_chart([DayRuns(today, 3, 0.5)], 14, Texts("en"), time.time())
    assert ">$0.500<" in paid
