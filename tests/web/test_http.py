"""The web board over plain HTTP: the token, the headers, read-only, escaping, the stream."""

from __future__ import annotations

import asyncio
import json
import re

import aiohttp
import pytest

from chatbot.board.web_reads import ChangeMark
from chatbot.domain.transitions import Action
from chatbot.web import WebSettings
from chatbot.web.server import CSP, WebBoard
from tests.web.boards import HOSTILE_SCRIPT, HOSTILE_TITLE, OWNER, WORKER

PAGES = ("", "card/reviewed", "card/asks", "card/hostile", "card/queues", "runs")


async def fetch(site, path: str, *, headers=None, method: str = "GET", **kwargs):
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as session:
        async with session.request(
            method, f"{site.url}{path}", headers=headers or {}, allow_redirects=False, **kwargs
        ) as response:
            return response.status, response.headers, await response.text()


def no_card_data(site, body: str) -> bool:
    return not any(slug in body for slug in site.seeded.groups)


async def test_every_page_and_the_stream_need_the_token(site) -> None:
    for path in (*PAGES, "events", "static/board.js", "card/nope"):
        for headers in (
            {},
            {"Authorization": "Bearer wrong-token-of-some-length"},
            {"Authorization": f"Basic {site.token}"},
            {"Cookie": f"board_session={site.token}"},
        ):
            status, sent, body = await fetch(site, path, headers=headers)
            assert status == 401, (path, headers)
            assert sent["WWW-Authenticate"].startswith("Bearer")
            assert no_card_data(site, body)
        status, _, body = await fetch(site, f"{path}?token=wrong")
        assert status == 401 and no_card_data(site, body)
    for path in PAGES:
        status, _, body = await fetch(site, path, headers=site.headers())
        assert status == 200, path


async def test_the_token_in_the_address_becomes_a_cookie_and_leaves_the_address(site) -> None:
    status, headers, _ = await fetch(site, f"card/reviewed?x=1&token={site.token}")
    assert status == 303
    assert headers["Location"] == "/card/reviewed?x=1"
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    value = re.match(r"board_session=([0-9a-f]+);", cookie).group(1)
    assert site.token not in cookie
    status, _, body = await fetch(
        site, "card/reviewed", headers={"Cookie": f"board_session={value}"}
    )
    assert status == 200 and "Add a /hello endpoint" in body


async def test_a_link_from_a_chat_app_is_sent_back_home_to_carry_its_cookie(site) -> None:
    """A SameSite=Strict cookie is withheld on a cross-site click; the 401 page then
    opens the same address again, from the board's own site, where it is sent."""
    cross = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
    _, _, body = await fetch(site, "card/reviewed", headers=cross)
    assert '<meta http-equiv="refresh" content="0">' in body
    _, _, body = await fetch(site, "card/reviewed", headers={"Sec-Fetch-Site": "same-origin"})
    assert "refresh" not in body


async def test_health_needs_no_token_and_shows_no_card_data(site) -> None:
    status, headers, body = await fetch(site, "healthz")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    health = json.loads(body)
    assert health["ok"] is True and health["transports"] == {}
    # in-review waits for its reviewer, operator for its operator; building's job runs.
    assert health["queue"]["queued"] == 2 and health["queue"]["running"] == 1
    assert 0 <= health["queue"]["oldest_queued_age_s"] < 60
    assert no_card_data(site, body)


async def test_health_says_503_while_a_chat_server_is_away(site) -> None:
    down = WebBoard(
        site.board,
        WebSettings("127.0.0.1", 0, site.token),
        transports_up=lambda: {"xmpp": True, "matrix": False},
    )
    await down.start()
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{down.url}healthz") as response:
                assert response.status == 503
                health = await response.json()
        assert health["ok"] is False and health["transports"] == {"xmpp": True, "matrix": False}
    finally:
        await down.stop()


async def test_every_response_carries_a_strict_policy(site) -> None:
    for path, headers in (
        ("", site.headers()),
        ("card/nope", site.headers()),
        ("static/board.js", site.headers()),
        ("", {}),
        ("healthz", {}),
    ):
        _, sent, _ = await fetch(site, path, headers=headers)
        assert sent["Content-Security-Policy"] == CSP, path
        assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP
        assert sent["X-Content-Type-Options"] == "nosniff"
        assert sent["Referrer-Policy"] == "no-referrer"
        assert sent["X-Frame-Options"] == "DENY"


async def test_pages_have_no_inline_script_or_style_and_load_nothing_from_elsewhere(site) -> None:
    for path in PAGES:
        _, _, body = await fetch(site, path, headers=site.headers())
        scripts = re.findall(r"<script\b[^>]*>", body)
        assert scripts and all(
            re.fullmatch(r'<script src="/static/[^"]+" defer>', s) for s in scripts
        ), scripts
        assert "</script>" in body and re.search(r"<script[^>]*>[^<]", body) is None
        assert " style=" not in body and "<style" not in body
        tags = re.findall(r"<[a-zA-Z][^<>]*>", body)  # escaped text holds no "<"
        assert not [tag for tag in tags if re.search(r"\son[a-z]+\s*=", tag)], path
        for url in re.findall(r'(?:src|href)="([^"]+)"', body):
            assert url.startswith("/"), (path, url)


async def test_every_value_from_cards_and_models_is_escaped(site) -> None:
    for path in PAGES:
        _, _, body = await fetch(site, path, headers=site.headers())
        assert HOSTILE_TITLE not in body and HOSTILE_SCRIPT not in body, path
    _, _, board = await fetch(site, "", headers=site.headers())
    assert "&lt;img src=x onerror=&quot;window.pwned=1&quot;&gt;" in board
    _, _, card = await fetch(site, "card/asks", headers=site.headers())
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in card


async def test_nothing_changes_state(site) -> None:
    async def snapshot() -> list:
        rows = []
        for table in ("cards", "events", "jobs", "questions", "telemetry", "outbox", "kv"):
            rows.append(await site.store.reader.fetchall(f"SELECT * FROM {table} ORDER BY 1"))
        return [[tuple(row) for row in table] for table in rows]

    before = await snapshot()
    files_before = sorted(p.relative_to(site.repo) for p in site.repo.rglob("*"))
    for path in PAGES:
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            status, _, body = await fetch(
                site, path, method=method, headers=site.headers(), data="answer=yes"
            )
            assert status == 405, (method, path)
        await fetch(site, path, headers=site.headers())
    await fetch(site, "healthz")
    assert await snapshot() == before
    assert sorted(p.relative_to(site.repo) for p in site.repo.rglob("*")) == files_before


async def test_an_unknown_card_is_a_404_that_names_it_escaped(site) -> None:
    status, _, body = await fetch(site, "card/no-such-card", headers=site.headers())
    assert status == 404 and "There is no card &#x27;no-such-card&#x27;." in body
    status, _, body = await fetch(site, "card/%3Cscript%3E", headers=site.headers())
    assert status == 404 and "<script>" not in body.replace('<script src="', "")


async def test_static_files_are_cached_by_version(site) -> None:
    _, _, board = await fetch(site, "", headers=site.headers())
    version = re.search(r'/static/board\.js\?v=([0-9a-f]+)"', board).group(1)
    status, headers, js = await fetch(site, f"static/board.js?v={version}", headers=site.headers())
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert "immutable" in headers["Cache-Control"] and "EventSource" in js
    _, headers, _ = await fetch(site, "static/board.js?v=old", headers=site.headers())
    assert headers["Cache-Control"] == "no-store"
    status, _, _ = await fetch(site, "static/secrets.txt", headers=site.headers())
    assert status == 404


async def test_german_pages(tmp_path) -> None:
    from tests.web.conftest import open_site

    site = await open_site(tmp_path, locale="de", planned=1)
    try:
        _, _, board = await fetch(site, "", headers=site.headers())
        assert "Wartet auf dich" in board and "Erledigt" in board and 'lang="de"' in board
        assert "operator_klaerung_noetig" in board  # the German phase label
        _, _, runs = await fetch(site, "runs", headers=site.headers())
        assert "Läufe und Kosten pro Tag" in runs
    finally:
        await site.web.stop()
        await site.store.close()


# --- the event stream -----------------------------------------------------------------


class Stream:
    """An open /events stream, read event by event."""

    def __init__(self, response: aiohttp.ClientResponse):
        self.response = response

    async def next(self, within: float = 5.0) -> dict:
        fields: dict[str, str] = {}
        async with asyncio.timeout(within):
            while True:
                line = (await self.response.content.readline()).decode().rstrip("\n")
                if line == "":
                    if "data" in fields:
                        return {"id": fields.get("id"), **json.loads(fields["data"])}
                    fields = {}
                    continue
                name, _, value = line.partition(": ")
                if name:
                    fields[name] = value


@pytest.fixture
async def http(site):
    async with aiohttp.ClientSession(headers=site.headers()) as session:
        yield session


async def open_stream(http, site, *, view: str = "board", since: str = "", last_id: str = ""):
    headers = {"Last-Event-ID": last_id} if last_id else {}
    response = await http.get(f"{site.url}events?view={view}&since={since}", headers=headers)
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    return Stream(response)


async def test_a_transition_is_streamed_with_the_card_as_the_board_shows_it(http, site) -> None:
    mark = (await site.board.web.change_mark()).token()
    stream = await open_stream(http, site, since=mark)
    await site.board.act("plain-1", Action.START, actor=OWNER)
    event = await stream.next()
    [card] = event["cards"]
    assert card["slug"] == "plain-1" and card["group"] == "working"
    assert card["html"].startswith('<li class="card" id="card-plain-1"')
    assert event["jobs"] is True  # the operator's job was queued
    assert ChangeMark.parse(event["id"]) == await site.board.web.change_mark()
    stream.response.close()


async def test_a_page_that_comes_back_is_told_what_it_missed(http, site) -> None:
    """As after a restart: the browser's Last-Event-ID is a mark of the database, so
    the new process tells it exactly the cards that changed while it was away."""
    seen = (await site.board.web.change_mark()).token()
    await site.board.act("plain-2", Action.ARCHIVE, actor=OWNER)
    await site.board.act("plain-1", Action.START, actor=OWNER)
    stream = await open_stream(http, site, since="garbage", last_id=seen)
    event = await stream.next()
    assert {c["slug"]: c["group"] for c in event["cards"]} == {
        "plain-2": "archived",
        "plain-1": "working",
    }
    stream.response.close()
    stream = await open_stream(http, site, view="card", since="not:a:mark")
    assert (await stream.next()) == {
        "id": (await site.board.web.change_mark()).token(),
        "reload": True,
    }
    stream.response.close()


async def test_card_and_runs_pages_hear_which_card_and_whether_jobs_changed(http, site) -> None:
    mark = (await site.board.web.change_mark()).token()
    card = await open_stream(http, site, view="card", since=mark)
    runs = await open_stream(http, site, view="runs", since=mark)
    await site.board.act("hostile", Action.ARCHIVE, actor=OWNER)
    assert await card.next() == {
        "id": (await site.board.web.change_mark()).token(),
        "slugs": ["hostile"],
        "jobs": False,
    }
    assert (await runs.next())["jobs"] is False
    card.response.close()
    runs.response.close()


async def test_stopping_ends_open_streams_at_once(http, site) -> None:
    stream = await open_stream(http, site, since=(await site.board.web.change_mark()).token())
    await asyncio.wait_for(site.web.stop(), 5)
    async with asyncio.timeout(5):
        rest = await stream.response.content.read()
    assert b"event:" not in rest


async def test_a_draft_shows_its_intake_dialogue_escaped(site) -> None:
    draft = await site.board.start_draft(f"greet people {HOSTILE_SCRIPT}", actor=OWNER)
    status, _, body = await fetch(site, f"card/{draft.slug}", headers=site.headers())
    assert status == 200 and 'id="conversation"' in body and 'id="intent"' not in body
    assert "<dt>owner</dt><dd>greet people &lt;script&gt;window.pwned=1&lt;/script&gt;</dd>" in body


async def test_the_runs_page_lists_the_workers_of_every_host(site) -> None:
    _, _, body = await fetch(site, "runs", headers=site.headers())
    assert "No worker seen: queued jobs wait until one runs" in body
    board = site.board
    # The seeded builder runs under WORKER; a second worker, on another host, stopped.
    await board.queue.worker_alive(
        WORKER, host="build-1", process=None, lanes=["heavy", "light"], lease_s=600
    )
    await board.queue.worker_alive(
        "old", host=HOSTILE_SCRIPT, process=None, lanes=["role:researcher"], lease_s=600
    )
    await board.queue.worker_stopped("old")
    _, _, body = await fetch(site, "runs", headers=site.headers())
    rows = re.findall(
        r'<tr><td>([^<]*)</td><td>([^<]*)</td><td>(\d+)</td><td class="worker-(\w+)"', body
    )
    assert ("build-1", "heavy, light", "1", "alive") in rows
    assert ("&lt;script&gt;window.pwned=1&lt;/script&gt;", "role:researcher", "0", "gone") in rows
    assert HOSTILE_SCRIPT not in body
    assert "No worker seen" not in body


async def test_a_card_page_shows_its_acceptance_criteria_and_pipeline(site) -> None:
    card = await site.board.reads.card("reviewed")
    assert card.pipeline_run_id  # started by the owner: a pipeline of its own
    criteria = ["GET /hello answers 200", f"no {HOSTILE_SCRIPT} in the body"]
    async with site.store.transaction() as db:
        await db.execute(
            "UPDATE cards SET acceptance_criteria = ? WHERE id = ?", (json.dumps(criteria), card.id)
        )
    _, _, body = await fetch(site, "card/reviewed", headers=site.headers())
    section = re.search(r'<section id="criteria"><h2>Acceptance criteria</h2>(.*?)</section>', body)
    assert section is not None
    assert section.group(1) == (
        '<ul class="criteria"><li>GET /hello answers 200</li>'
        "<li>no &lt;script&gt;window.pwned=1&lt;/script&gt; in the body</li></ul>"
    )
    assert f"pipeline {card.pipeline_run_id}" in body
    _, _, plain = await fetch(site, "card/asks", headers=site.headers())
    assert 'id="criteria"' not in plain  # a card without criteria has no such section


async def test_a_card_history_names_each_move_in_words(site) -> None:
    # Issue 34: the history column showed review_approved, operator_direct.
    _, _, body = await fetch(site, "card/reviewed", headers=site.headers())
    history = re.search(r'<section id="history">(.*?)</section>', body, re.S)
    assert history is not None
    # Each row's action and who did it (the seed writes the code as the reason too).
    cell = r'<td data-label="[^"]*">([^<]*)</td>'
    actions = re.findall(f"{cell}{cell}{cell}</tr>", history.group(1))
    actions = [(action, actor) for action, actor, _reason in actions]
    assert actions == [
        ("review approved", "system"),
        ("builder committed", "system"),
        ("operator chose to build directly", "system"),
        ("started", OWNER),
        ("imported from its intent file", "system"),
    ]


async def test_the_board_says_1_card_and_gives_its_script_both_forms(tmp_path) -> None:
    # Issue 34: "1 cards". The page's script recounts live, so it gets both forms.
    from chatbot.board import BoardService
    from chatbot.domain.phases import Kind, Phase
    from chatbot.store import Store
    from chatbot.store import cards as card_store

    store = await Store.open(tmp_path / "board.sqlite3")
    board = BoardService(store, tmp_path)
    async with store.transaction() as db:
        await card_store.create(db, "only", Kind.INTENT, Phase.PLANNED, actor="t")
    web = WebBoard(board, WebSettings("127.0.0.1", 0, "t" * 32, "en"))
    await web.start()
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(web.url, headers={"Authorization": "Bearer " + "t" * 32}) as r:
                body = await r.text()
        total = re.search(r'<small id="total"[^>]*>([^<]*)</small>', body)
        assert total is not None and total.group(1) == "1 card"
        assert 'data-one="1 card"' in total.group(0) and 'data-many="2 cards"' in total.group(0)
    finally:
        await web.stop()
        await store.close()
