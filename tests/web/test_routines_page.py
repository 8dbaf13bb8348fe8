"""`/routines` on the web board: each routine with its next run in its own zone and its
last outcomes; and `/metrics` counts routine runs by outcome."""

from __future__ import annotations

import secrets
from html import unescape

from chatbot.board.routines import new_routine
from chatbot.domain.schedules import parse
from chatbot.web.metrics import Metrics
from chatbot.web.metrics_http import MetricsDoor, MetricsListener
from tests.web.owners import OwnerSite
from tests.web.test_metrics import parse as parse_metrics
from tests.web.test_metrics import scrape, series

# The `site` fixture (tests/web/conftest.py) is a board whose owners sign in and act.
OWNERS = True
TOKEN = "a-reader-token-long-enough"
ROOM = {"transport": "xmpp", "target": "ops@muc", "target_kind": "room"}
NOW = 1_800_000_000.0  # Fri 15 Jan 2027


async def test_the_routines_page_shows_next_runs_and_last_outcomes(site: OwnerSite) -> None:
    schedule = parse("weekdays 09:00", "Europe/Berlin", NOW, once=False)
    made = await site.board.routines.add(
        new_routine(schedule, "/research <deps>", "xmpp:o@x.org", ROOM, NOW)
    )
    (occurrence,) = await site.board.routines.claim_due(made.next_at + 1)
    await site.board.routines.finish_run(occurrence, "ran", "deps", "", made.next_at + 2)
    status, _, raw = await site.request("GET", "routines", headers=site.headers())
    assert status == 200 and "<code>/research &lt;deps&gt;</code>" in raw  # text, not markup
    body = unescape(raw)
    row = body[body.index(f'<tr id="routine-{made.id}">') :]
    assert "weekdays 09:00 (Europe/Berlin)" in row
    assert "Tue 2027-01-19 09:00 CET" in row and "<td>ran</td>" in row
    status, _, _ = await site.request("GET", "routines")
    assert status == 401


async def test_metrics_count_routine_runs_by_outcome(site: OwnerSite) -> None:
    schedule = parse("every day 09:00", "Europe/Berlin", NOW, once=False)
    made = await site.board.routines.add(new_routine(schedule, "/start x", "o", ROOM, NOW))
    for day, outcome in enumerate(("ran", "refused", "ran")):
        (occurrence,) = await site.board.routines.claim_due(made.next_at + 1 + day * 86400)
        await site.board.routines.finish_run(occurrence, outcome, None, "", NOW)
    token = secrets.token_urlsafe(24)
    door = MetricsDoor(Metrics(site.board, lambda: {}), (token,))
    listener = MetricsListener(door, "127.0.0.1", 0)
    assert await listener.start()
    try:
        _, text, _ = await scrape(listener.url, token)
    finally:
        await listener.stop()
    got = series(parse_metrics(text), "intentboard_routine_runs")
    assert got[(("outcome", "ran"),)] == 2 and got[(("outcome", "refused"),)] == 1
    assert got[(("outcome", "skipped"),)] == 0


async def test_every_page_links_the_routines_page_in_its_top_bar(site: OwnerSite) -> None:
    for path in ("", "runs", "budget", "cards", "routines"):
        status, _, raw = await site.request("GET", path, headers=site.headers())
        assert status == 200, path
        nav = raw[raw.index('<header class="top"><nav>') : raw.index("</nav>")]
        assert '<a href="/routines">Routines</a>' in nav, (path, nav)
    # The link leads to the page.
    status, _, raw = await site.request("GET", "routines", headers=site.headers())
    assert status == 200 and "<h1>Routines</h1>" in raw


async def test_the_routines_page_names_the_owners_own_time_zones(site: OwnerSite) -> None:
    status, _, raw = await site.request("GET", "routines", headers=site.headers())
    assert status == 200 and 'id="owner-zones"' not in raw  # nobody set one
    await site.board.routines.set_owner_zone("xmpp:o@x.org", "Asia/Tokyo")
    schedule = parse("weekdays 09:00", "Asia/Tokyo", NOW, once=False)
    await site.board.routines.add(new_routine(schedule, "/start x", "xmpp:o@x.org", ROOM, NOW))
    status, _, raw = await site.request("GET", "routines", headers=site.headers())
    body = unescape(raw)
    zones = body[body.index('<p class="zones" id="owner-zones">') :]
    assert zones.startswith(
        '<p class="zones" id="owner-zones">The owners\' own time zones for the routines '
        "they make (/timezone): xmpp:o@x.org: Asia/Tokyo</p>"
    )
    assert "weekdays 09:00 (Asia/Tokyo)" in body
