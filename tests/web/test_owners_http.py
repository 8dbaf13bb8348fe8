"""Owners on the web board over plain HTTP: the sign-in link, the session cookie, every
action from a card's page through the chat's own handlers, and the refusals (403,
nothing changed)."""

from __future__ import annotations

import hashlib
from html import unescape
from pathlib import Path

import pytest

from chatbot.board.web_sessions import LINK_VALID_S
from chatbot.domain.phases import Kind, Phase
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from tests.web.boards import HOSTILE_TITLE
from tests.web.owners import OWNER_ID, OwnerSite, open_owner_site, owner

VIA_WEB = f"{OWNER_ID} via web"


# The `site` fixture (tests/web/conftest.py) is a board whose owners sign in and act.
OWNERS = True


async def snapshot(site: OwnerSite) -> list:
    tables = ("cards", "events", "jobs", "questions", "run_talk", "requests", "outbox")
    found = []
    for table in tables:
        rows = await site.store.reader.fetchall(f"SELECT * FROM {table} ORDER BY 1")
        found.append([tuple(row) for row in rows])
    return found


async def history(site: OwnerSite, slug: str) -> list[tuple[str, str]]:
    view = await site.board.reads.view(slug)
    return [(event.action, event.actor) for event in view.events]


# --- signing in ---------------------------------------------------------------------


async def test_a_link_shows_a_button_and_signs_in_once(site: OwnerSite) -> None:
    token = await site.link()
    # A chat app's link preview only GETs: the link stays usable, no cookie is set.
    for _ in range(2):
        status, headers, body = await site.request("GET", f"signin/{token}")
        assert status == 200 and "Set-Cookie" not in headers
        assert f"Sign in to this board as {OWNER_ID}?" in body
        assert 'method="post" action="/signin"' in body
    status, headers, _ = await site.request("POST", "signin", data={"token": token})
    assert status == 303 and headers["Location"] == "/"
    cookie = headers["Set-Cookie"]
    assert cookie.startswith("board_owner=")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain http, no proxy said https
    value = cookie.split(";")[0].split("=", 1)[1]
    [row] = await site.store.reader.fetchall("SELECT * FROM web_sessions")
    assert row["session_hash"] == hashlib.sha256(value.encode()).hexdigest()
    assert value not in str(tuple(row)) and token not in str(tuple(row))
    assert row["identity"] == OWNER_ID and row["signed_in_at"] is not None
    # The session reads the board without the token, and names who is signed in.
    status, _, body = await site.request("GET", "card/plain-0", headers=owner(value))
    assert status == 200 and f"Signed in as {OWNER_ID}." in body
    # The link is spent: a second use, in this browser or another, signs nobody in.
    for method, path, data in (
        ("POST", "signin", {"token": token}),
        ("GET", f"signin/{token}", None),
    ):
        status, headers, body = await site.request(method, path, data=data)
        assert status == 410 and "Set-Cookie" not in headers
        assert "was used already" in body and "/web" in body
    assert len(await site.store.reader.fetchall("SELECT * FROM web_sessions")) == 1


async def test_the_cookie_is_secure_when_a_trusted_proxy_says_https(tmp_path: Path) -> None:
    for proxies, secure in ((("127.0.0.1/8",), True), ((), False)):
        opened = await open_owner_site(tmp_path / str(secure), trusted_proxies=proxies)
        try:
            token = await opened.link()
            status, headers, _ = await opened.request(
                "POST", "signin", data={"token": token}, headers={"X-Forwarded-Proto": "https"}
            )
            assert status == 303
            assert ("Secure" in headers["Set-Cookie"]) is secure
        finally:
            await opened.close()


async def test_an_expired_or_forged_link_signs_nobody_in(site: OwnerSite) -> None:
    token = await site.link()
    sessions = site.board.web_sessions
    real_clock = sessions.clock
    sessions.clock = lambda: real_clock() + LINK_VALID_S + 1
    try:
        for method, path, data in (
            ("GET", f"signin/{token}", None),
            ("POST", "signin", {"token": token}),
        ):
            status, headers, body = await site.request(method, path, data=data)
            assert status == 410 and "Set-Cookie" not in headers
            assert "has expired" in body
    finally:
        sessions.clock = real_clock
    [row] = await site.store.reader.fetchall("SELECT signed_in_at, session_hash FROM web_sessions")
    assert tuple(row) == (None, None)
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    for method, path, data in (
        ("GET", f"signin/{forged}", None),
        ("POST", "signin", {"token": forged}),
    ):
        status, headers, body = await site.request(method, path, data=data)
        assert status == 404 and "not known" in body and "Set-Cookie" not in headers


# --- actions ------------------------------------------------------------------------


async def test_start_goes_through_the_chat_command_and_names_the_owner_via_web(
    site: OwnerSite,
) -> None:
    cookie = await site.sign_in()
    page = await site.act(cookie, "plain-0", "start")
    assert (await site.board.reads.card("plain-0")).phase is Phase.OPERATOR_RUNNING
    assert ("start", VIA_WEB) in await history(site, "plain-0")
    assert "plain-0: /start — planned → operator running." in unescape(page)
    # The answer is the page's: no chat was sent it.
    assert not await site.store.reader.fetchall(
        "SELECT * FROM outbox WHERE text LIKE '%/start — planned%'"
    )


async def test_an_action_the_phase_refuses_says_chats_refusal_and_changes_nothing(
    site: OwnerSite,
) -> None:
    cookie = await site.sign_in()
    before = await snapshot(site)
    page = unescape(await site.act(cookie, "plain-0", "deploy"))
    assert (
        "Refused: plain-0 is in phase planned; /deploy is not possible there. Allowed: /start"
        in page
    )
    assert await snapshot(site) == before


async def test_an_answer_by_option_and_one_in_words_with_html(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    status, _, body = await site.request("GET", "card/asks", headers=owner(cookie))
    assert 'name="option" value="1">SQLite</button>' in body
    assert "<img src=x" not in body  # the hostile option is a button's text, escaped
    await site.act(cookie, "asks", "answer", option="1")
    card = await site.board.reads.card("asks")
    assert card.phase is Phase.OPERATOR_RUNNING
    assert card.data.answers[-1] == {
        "kind": "needs_human",
        "question": card.data.answers[-1]["question"],
        "answer": "SQLite",
        "by": VIA_WEB,
    }
    # A question answered in words that carry HTML: kept as written, shown as text.
    async with site.store.transaction() as db:
        other = await card_store.create(
            db, "asks-too", Kind.INTENT, Phase.NEEDS_HUMAN, actor="t", title="Asks too"
        )
        await question_store.ask(db, other.id, "needs_human", "And the cache?", [])
    await site.act(cookie, "asks-too", "answer", text=HOSTILE_TITLE)
    answers = (await site.board.reads.card("asks-too")).data.answers
    assert answers[-1]["answer"] == HOSTILE_TITLE and answers[-1]["by"] == VIA_WEB
    _, _, page = await site.request("GET", "card/asks-too", headers=owner(cookie))
    assert HOSTILE_TITLE not in page and "&lt;img src=x" in page


async def test_approve_deny_and_steer_a_running_agent(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    card = await site.board.reads.card("building")
    job = (await site.board.reads.view("building")).active_job
    await site.board.talk.begins(job)
    first = await site.board.talk.ask_approval(job, card, tool="Bash", command="curl x", cwd="/w")
    body = (await site.request("GET", "card/building", headers=owner(cookie)))[2]
    assert f'id="decide-{first.id}"' in body and 'value="steer"' in body
    await site.act(cookie, "building", "approve")
    assert (await site.board.talk.approval(first.id)).state == "allowed"
    assert (await site.board.talk.approval(first.id)).actor == VIA_WEB
    second = await site.board.talk.ask_approval(
        job, card, tool="Bash", command="rm -rf /", cwd="/w"
    )
    await site.act(cookie, "building", "deny", text="not <that>")
    denied = await site.board.talk.approval(second.id)
    assert (denied.state, denied.reason, denied.actor) == ("denied", "not <that>", VIA_WEB)
    page = unescape(await site.act(cookie, "building", "steer", text="use the v2 API"))
    assert "building: sent to the builder" in page
    [steer] = [r for r in await site.board.web.talk_of(card.id) if r.kind == "steer"]
    assert (steer.text, steer.actor) == ("use the v2 API", VIA_WEB)
    assert ("steer", VIA_WEB) in await history(site, "building")


async def test_a_decided_approval_has_no_decide_form_left(site: OwnerSite) -> None:
    """Issue 39: only a browser test held that an approval once allowed or denied loses
    its approve/deny form on the card's page; the open one beside it keeps its own."""
    cookie = await site.sign_in()
    card = await site.board.reads.card("building")
    job = (await site.board.reads.view("building")).active_job
    await site.board.talk.begins(job)
    allowed = await site.board.talk.ask_approval(job, card, tool="Bash", command="curl x", cwd="/w")
    await site.act(cookie, "building", "approve")
    denied = await site.board.talk.ask_approval(job, card, tool="Bash", command="rm x", cwd="/w")
    await site.act(cookie, "building", "deny", text="no")
    still_open = await site.board.talk.ask_approval(job, card, tool="Bash", command="ls", cwd="/w")
    states = [
        (await site.board.talk.approval(row.id)).state for row in (allowed, denied, still_open)
    ]
    assert states == ["allowed", "denied", "open"]
    body = (await site.request("GET", "card/building", headers=owner(cookie)))[2]
    assert f'id="decide-{allowed.id}"' not in body
    assert f'id="decide-{denied.id}"' not in body
    assert f'id="decide-{still_open.id}"' in body
    assert body.count('value="approve"') == 1 and body.count('value="deny"') == 1


async def test_retry_fix_cancel_archive_deploy(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    async with site.store.transaction() as db:
        for slug in ("broken", "broken-too"):
            await card_store.create(
                db,
                slug,
                Kind.INTENT,
                Phase.FAILED,
                actor="t",
                title=slug,
                failure_stage="builder",
                failure_detail="boom",
                lane="light",
            )
    await site.act(cookie, "broken", "retry")
    assert (await site.board.reads.card("broken")).phase is Phase.BUILDING
    await site.act(cookie, "broken-too", "fix")
    assert (await site.board.reads.card("broken-too")).phase is Phase.FIXER_RUNNING
    await site.act(cookie, "operator", "cancel")
    assert (await site.board.reads.card("operator")).phase is Phase.PLANNED
    await site.act(cookie, "plain-1", "archive")
    assert (await site.board.reads.card("plain-1")).phase is Phase.ARCHIVED
    await site.act(cookie, "reviewed", "deploy")
    jobs = await job_store.listing(site.store.reader)
    reviewed = await site.board.reads.card("reviewed")
    assert any(j.kind == "deploy" and j.card_id == reviewed.id for j in jobs)
    for slug, action in (
        ("broken", "retry"),
        ("broken-too", "fix"),
        ("operator", "cancel"),
        ("plain-1", "archive"),
        ("reviewed", "deploy"),
    ):
        assert (action, VIA_WEB) in await history(site, slug), slug


async def test_accept_and_decline_a_requesters_request(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    async with site.board.transaction() as tx:
        asked = await tx.add_request("xmpp:req@localhost", "xmpp", "start", "plain-1")
        other = await tx.add_request("xmpp:req@localhost", "xmpp", "start", "plain-2")
    body = (await site.request("GET", "card/plain-1", headers=owner(cookie)))[2]
    assert f'name="request" value="{asked.id}"' in body
    page = unescape(await site.act(cookie, "plain-1", "accept", request=str(asked.id)))
    assert f"Request #{asked.id} accepted by {VIA_WEB}." in page
    assert (await site.board.reads.card("plain-1")).phase is Phase.OPERATOR_RUNNING
    await site.act(cookie, "plain-2", "decline", request=str(other.id))
    assert (await site.board.reads.request(other.id)).state == "declined"
    assert (await site.board.reads.card("plain-2")).phase is Phase.PLANNED


# --- refusals -----------------------------------------------------------------------


async def test_forms_without_a_session_its_csrf_or_our_origin_are_403(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    other = await site.sign_in()
    mine = await site.csrf(cookie, "plain-0")
    theirs = await site.csrf(other, "plain-0")
    assert mine != theirs
    before = await snapshot(site)
    cases = [
        # The board's token reads; it does not act.
        (site.headers(), {"csrf": mine}, "Only an owner signed in with /web"),
        ({**site.headers(), **owner("forged-cookie")}, {"csrf": mine}, "session has ended"),
        (owner(cookie), {}, "not one of your session"),
        (owner(cookie), {"csrf": theirs}, "not one of your session"),
        (owner(cookie), {"csrf": mine[:-1]}, "not one of your session"),
        ({**owner(cookie), "Origin": "http://evil.example"}, {"csrf": mine}, "another site"),
        ({**owner(cookie), "Origin": "null"}, {"csrf": mine}, "another site"),
        ({**owner(cookie), "Sec-Fetch-Site": "cross-site"}, {"csrf": mine}, "another site"),
    ]
    for headers, data, said in cases:
        status, _, body = await site.request(
            "POST", "card/plain-0/act", headers=headers, data={"action": "start", **data}
        )
        assert status == 403, (headers, data)
        assert said in unescape(body), body
    assert await snapshot(site) == before
    # The same form from our own origin goes through.
    status, _, _ = await site.request(
        "POST",
        "card/plain-0/act",
        headers={**owner(cookie), "Origin": site.url.rstrip("/")},
        data={"action": "start", "csrf": mine},
    )
    assert status == 303
    assert (await site.board.reads.card("plain-0")).phase is Phase.OPERATOR_RUNNING


async def test_a_revoked_session_acts_no_more_and_is_told(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    csrf = await site.csrf(cookie, "plain-0")
    assert await site.board.web_sessions.revoke(OWNER_ID) == 1
    before = await snapshot(site)
    status, _, body = await site.request(
        "POST", "card/plain-0/act", headers=owner(cookie), data={"action": "start", "csrf": csrf}
    )
    # Without the board's token the ended session is no one: 401, and why.
    assert status == 401 and "Your web session has ended" in body
    status, _, body = await site.request(
        "POST",
        "card/plain-0/act",
        headers={**owner(cookie), **site.headers()},
        data={"action": "start", "csrf": csrf},
    )
    assert status == 403 and "Your web session has ended" in body
    status, _, body = await site.request("GET", "card/plain-0", headers=owner(cookie))
    assert status == 401 and "Your web session has ended" in body and "plain-0" not in body
    assert await snapshot(site) == before


async def test_someone_no_longer_an_owner_acts_no_more(site: OwnerSite) -> None:
    cookie = await site.sign_in("xmpp:former@localhost")  # signed in, then taken off owners
    before = await snapshot(site)
    page = unescape(await site.act(cookie, "plain-0", "start"))
    assert "Only an owner acts from the web board; nothing was changed." in page
    assert await snapshot(site) == before


async def test_reading_with_the_token_shows_no_forms(site: OwnerSite) -> None:
    status, _, body = await site.request("GET", "card/asks", headers=site.headers())
    assert status == 200 and "<form" not in body and 'name="csrf"' not in body


def test_chatbot_check_says_where_sign_in_links_go(tmp_path: Path) -> None:
    from chatbot.config import ConfigError, parse_config
    from chatbot.web.settings import describe
    from tests.web.test_units import CONFIG

    web = '\n[web]\ntoken_file = "web-token"\n'
    plain = parse_config(CONFIG + web, tmp_path / "bot.toml", secrets=False)
    assert "/web makes no sign-in links: set [web] public_url" in describe(plain)
    linked = parse_config(
        CONFIG + web + 'public_url = "https://board.example.org"\n',
        tmp_path / "bot.toml",
        secrets=False,
    )
    assert linked.web.public_url == "https://board.example.org/"
    assert "/web sign-in links go to https://board.example.org/signin/" in describe(linked)
    for bad in ("board.example.org", "ftp://x/", "https://x/?a=1"):
        with pytest.raises(ConfigError, match=r"web\.public_url: .* write it like https://"):
            parse_config(
                CONFIG + web + f'public_url = "{bad}"\n', tmp_path / "b.toml", secrets=False
            )


async def test_in_german_the_page_and_chats_answers_are_german(tmp_path: Path) -> None:
    german = await open_owner_site(tmp_path, locale="de")
    try:
        token = await german.link()
        _, _, body = await german.request("GET", f"signin/{token}")
        assert f"Als {OWNER_ID} am Board anmelden?" in body and ">Anmelden</button>" in body
        cookie = await german.sign_in()
        page = unescape(await german.act(cookie, "plain-0", "deploy"))
        assert "Angemeldet als" in page and ">Starten</button>" in page
        assert "Abgelehnt: plain-0 ist in Phase geplant; /deploy ist dort nicht möglich." in page
        _, _, spent = await german.request("POST", "signin", data={"token": token + "x"})
        assert "Dieser Anmeldelink ist unbekannt" in unescape(spent)
    finally:
        await german.close()
