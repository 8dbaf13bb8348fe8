"""Line comments from the web card page (issue 35 point 2), over real HTTP: an owner's
form keeps the comment, starts the fixer and says it in the room; a reader sees the
change but no form; a POST without the owner's session or its CSRF token changes
nothing; a form for a commit the card has left is refused."""

from __future__ import annotations

from html import unescape
from pathlib import Path

import pytest

from chatbot.domain.phases import Kind, Phase
from chatbot.notify.notifier import Destination
from chatbot.store import cards as card_store
from tests.web.owners import CSRF, OwnerSite, open_owner_site, owner
from tests.web.test_change_page import commit_all, git

ROOM = Destination("xmpp", "board@conference.localhost")
CODE = "".join(f"value_{n} = {n}\n" for n in range(1, 11))


@pytest.fixture
async def site(tmp_path: Path):
    opened = await open_owner_site(tmp_path, rooms=[ROOM])
    try:
        repo = opened.repo
        if not (repo / ".git").exists():
            git(repo, "init", "-q", "-b", "main")
        (repo / "README.md").write_text("x\n")
        commit_all(repo, "base")
        (repo / "app.py").write_text(CODE + "<script>alert(1)</script>\n")
        head = commit_all(repo, "the builder's")
        async with opened.store.transaction() as db:
            await card_store.create(
                db,
                "commented",
                Kind.INTENT,
                Phase.READY_FOR_DEPLOYMENT,
                actor="t",
                commit_hash=head,
            )
        opened.head = head  # type: ignore[attr-defined]
        yield opened
    finally:
        await opened.close()


async def comment_rows(site: OwnerSite) -> list[tuple]:
    rows = await site.store.reader.fetchall(
        "SELECT path, line_start, line_end, quote, body, state FROM line_comments ORDER BY id"
    )
    return [tuple(row) for row in rows]


async def test_an_owner_comments_on_lines_and_the_fixer_starts_with_it(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    status, _, page = await site.request("GET", "card/commented?line=0:3", headers=owner(cookie))
    assert status == 200
    # A line's number links to the form with it picked; the form is filled in with it.
    assert 'href="?line=0:3#comment"' in page
    assert '<option value="app.py" selected>' in page
    assert 'name="start" inputmode="numeric" size="5" value="3"' in page
    csrf = CSRF.search(page).group(1)
    data = {
        "csrf": csrf,
        "action": "comment",
        "commit": site.head,  # type: ignore[attr-defined]
        "path": "app.py",
        "start": "3",
        "end": "4",
        "text": "use a loop",
    }
    status, _, _ = await site.request(
        "POST", "card/commented/act", headers=owner(cookie), data=data
    )
    assert status == 303
    assert await comment_rows(site) == [
        ("app.py", 3, 4, "value_3 = 3\nvalue_4 = 4", "use a loop", "open")
    ]
    assert (await site.board.reads.card("commented")).phase is Phase.FIXER_RUNNING
    said = [
        row[0]
        for row in await site.store.reader.fetchall(
            "SELECT text FROM outbox WHERE room = ?", (ROOM.room,)
        )
    ]
    assert any(
        t.startswith("💬 commented: xmpp:owner@localhost via web on app.py:3-4") for t in said
    )
    _, _, page = await site.request("GET", "card/commented", headers=owner(cookie))
    listed = unescape(page[page.index('<section id="comments">') :])
    assert "app.py:3-4" in listed and "use a loop" in listed and "open" in listed


async def test_a_reader_sees_the_change_but_no_form_and_cannot_post(site: OwnerSite) -> None:
    status, _, page = await site.request("GET", f"card/commented?token={site.token}")
    if status != 200:
        status, _, page = await site.request(
            "GET", "card/commented", headers={"Authorization": f"Bearer {site.token}"}
        )
    assert status == 200
    assert "value_3" in page and 'id="comment"' not in page and 'name="csrf"' not in page
    assert "&lt;script&gt;" in page and "<script>alert" not in page
    data = {"action": "comment", "path": "app.py", "start": "3", "text": "x", "csrf": "nope"}
    status, _, _ = await site.request("POST", "card/commented/act", data=data)
    assert status == 401  # no credentials at all
    reader = {"Authorization": f"Bearer {site.token}"}
    status, _, _ = await site.request("POST", "card/commented/act", headers=reader, data=data)
    assert status == 403  # the token reads, it does not act
    cookie = await site.sign_in()
    status, _, _ = await site.request(
        "POST", "card/commented/act", headers=owner(cookie), data=data
    )
    assert status == 403
    assert await comment_rows(site) == []
    assert (await site.board.reads.card("commented")).phase is Phase.READY_FOR_DEPLOYMENT


async def test_a_form_for_an_older_commit_or_a_line_outside_the_change_is_refused(
    site: OwnerSite,
) -> None:
    cookie = await site.sign_in()
    page = await site.act(
        cookie, "commented", "comment", commit="0" * 40, path="app.py", start="1", text="x"
    )
    assert "has a newer commit" in unescape(page)
    page = await site.act(
        cookie,
        "commented",
        "comment",
        commit=site.head,  # type: ignore[attr-defined]
        path="app.py",
        start="99",
        text="x",
    )
    assert "line 99 of app.py is not in the change" in unescape(page)
    assert await comment_rows(site) == []
