"""/web: one-time sign-in links to the web board, in a direct chat only; sessions."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from chatbot.config import parse_config
from chatbot.store import Store
from chatbot.store import chat as chat_store
from tests.chat.conftest import MATRIX_OWNER, OWNER, REQUESTER, STRANGER, Env, dm, make_env, msg

PUBLIC = "https://board.example.org/sub/"
BASE = """
[bot]
owners = ["owner@example.org"]
repo = "repo"
[runtimes.codex]
binary = "codex"
[lanes.light]
runtime = "codex"
model = "m"
iteration_limit = 10
[web]
token_file = "web-token"
"""
LINK = re.compile(re.escape(PUBLIC) + r"signin/([A-Za-z0-9_-]+)")


def config(tmp_path: Path, extra: str = ""):
    return parse_config(BASE + extra, tmp_path / "bot.toml", secrets=False)


@pytest.fixture
def web_env(store: Store, tmp_path: Path) -> Env:
    return make_env(store, tmp_path, config=config(tmp_path, f'public_url = "{PUBLIC}"\n'))


async def rows(env: Env) -> list:
    return await env.store.reader.fetchall("SELECT * FROM web_sessions ORDER BY id")


async def test_an_owner_gets_a_one_time_link_in_a_direct_chat(web_env: Env) -> None:
    answer = await web_env.one(dm("/web"))
    assert answer.target_kind == "person" and answer.room == OWNER.id
    token = LINK.search(answer.text).group(1)
    assert len(token) >= 43  # 32 random bytes: 256 bits
    assert "10 minutes" in answer.text
    [row] = await rows(web_env)
    assert row["identity"] == "xmpp:owner@example.org"
    assert row["link_hash"] == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str(tuple(row))  # only its digest is kept
    assert row["link_expires_at"] - row["created_at"] == 600
    # Each /web is a new link.
    again = LINK.search((await web_env.one(dm("/web"))).text).group(1)
    assert again != token and len(await rows(web_env)) == 2


async def test_in_a_room_it_refuses_and_posts_no_link(web_env: Env) -> None:
    for text in ("/web", "/web sessions", "/web revoke"):
        answer = await web_env.one(msg(text))
        assert "direct chat" in answer.text and "signin/" not in answer.text
        assert answer.purpose == "refusal"
    assert await rows(web_env) == []


async def test_a_non_owner_is_refused_like_other_owner_only_commands(web_env: Env) -> None:
    answer = await web_env.one(dm("/web", REQUESTER))
    assert answer.text == "Only an owner may do that; nothing was changed."
    stranger = await web_env.one(dm("/web", STRANGER))
    assert stranger.text == "You may not use this bot; nothing was changed."
    assert await rows(web_env) == []


async def test_without_public_url_it_names_the_key_to_set(store: Store, tmp_path: Path) -> None:
    env = make_env(store, tmp_path, config=config(tmp_path))
    answer = await env.one(dm("/web"))
    assert "[web] public_url" in answer.text and "signin/" not in answer.text
    assert await rows(env) == []
    german = make_env(store, tmp_path, locale="de", config=config(tmp_path))
    assert "[web] public_url" in (await german.one(dm("/web"))).text
    assert "Der Anmeldelink kann nicht erstellt werden" in (await german.said(dm("/web")))[0].text


async def test_sessions_are_listed_per_owner_and_revoke_ends_ones_own(web_env: Env) -> None:
    sessions = web_env.board.web_sessions
    mine = []
    for agent in ("Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36", "Firefox/121.0"):
        link = LINK.search((await web_env.one(dm("/web"))).text).group(1)
        mine.append((await sessions.sign_in(link, agent)).session.id)
    theirs = await sessions.issue(str(MATRIX_OWNER))
    their_session = await sessions.sign_in(theirs.token, "curl/8")
    listed = (await web_env.one(dm("/web sessions"))).text
    assert f"#{mine[0]}: signed in" in listed and "Chrome (Linux)" in listed
    assert f"#{mine[1]}:" in listed and "Firefox" in listed
    assert f"#{their_session.session.id}" not in listed and "curl" not in listed
    assert "Ended web session" in (await web_env.one(dm(f"/web revoke {mine[0]}"))).text
    listed = (await web_env.one(dm("/web sessions"))).text
    assert f"#{mine[0]}:" not in listed and f"#{mine[1]}:" in listed
    unused = LINK.search((await web_env.one(dm("/web"))).text).group(1)
    assert (
        "Ended your web sessions and unused sign-in links: 2."
        in (await web_env.one(dm("/web revoke"))).text
    )
    assert "no web session" in (await web_env.one(dm("/web sessions"))).text
    with pytest.raises(Exception, match="revoked"):
        await sessions.sign_in(unused, "x")  # the unused link ended with them
    # Plain /web revoke ends one's own only.
    assert await sessions.session(their_session.cookie) is not None


async def test_any_owner_lists_and_ends_every_owners_session(web_env: Env) -> None:
    # Issue 33 point 2: no remaining owner could end another owner's session.
    sessions = web_env.board.web_sessions
    link = LINK.search((await web_env.one(dm("/web"))).text).group(1)
    mine = await sessions.sign_in(link, "Firefox/121.0")
    theirs = await sessions.issue(str(MATRIX_OWNER))
    their_session = await sessions.sign_in(theirs.token, "curl/8")
    listed = (await web_env.one(dm("/web sessions all"))).text
    assert listed.startswith("Every owner's web sessions:")
    assert f"#{mine.session.id}: xmpp:owner@example.org, signed in" in listed
    assert f"#{their_session.session.id}: matrix:@owner:example.org, signed in" in listed
    ended = await web_env.one(dm(f"/web revoke #{their_session.session.id}"))
    assert ended.text == (
        f"Ended web session #{their_session.session.id} of matrix:@owner:example.org."
    )
    assert await sessions.session(their_session.cookie) is None
    assert await sessions.session(mine.cookie) is not None
    # An ended or unknown number ends nothing and says where to look.
    again = await web_env.one(dm(f"/web revoke {their_session.session.id}"))
    assert again.purpose == "refusal" and "/web sessions all" in again.text
    unknown = await web_env.one(dm("/web revoke 999"))
    assert "no live web session #999" in unknown.text
    more = await sessions.issue(str(MATRIX_OWNER))  # an unused link ends too
    everyone = await web_env.one(dm("/web revoke all"))
    assert everyone.text == "Ended every owner's web sessions and unused sign-in links: 2."
    assert await sessions.session(mine.cookie) is None
    with pytest.raises(Exception, match="revoked"):
        await sessions.sign_in(more.token, "x")
    none = await web_env.one(dm("/web sessions all"))
    assert none.text == "No owner has a web session. /web makes a sign-in link."


@pytest.mark.parametrize(
    "text",
    ["/web sessions mine", "/web revoke -1", "/web revoke alll", "/web revoke 0", "/web revoke x"],
)
async def test_a_bad_session_word_is_refused_with_the_usage(web_env: Env, text: str) -> None:
    answer = await web_env.one(dm(text))
    assert answer.purpose == "refusal"
    assert answer.text.startswith("/web takes: nothing (a sign-in link), sessions [all]")
    assert await rows(web_env) == []


async def test_a_requester_cannot_list_or_end_sessions(web_env: Env) -> None:
    sessions = web_env.board.web_sessions
    link = await sessions.issue(str(OWNER))
    signed = await sessions.sign_in(link.token, "Firefox/121.0")
    for text in ("/web sessions all", f"/web revoke {signed.session.id}", "/web revoke all"):
        answer = await web_env.one(dm(text, REQUESTER))
        assert answer.text == "Only an owner may do that; nothing was changed."
    assert await sessions.session(signed.cookie) is not None


async def test_only_revoke_takes_a_number(web_env: Env) -> None:
    answer = await web_env.one(dm("/web sessions 2"))
    assert "Only /web revoke takes a number" in answer.text


async def test_a_delivered_link_is_not_kept_in_the_outbox(web_env: Env) -> None:
    # Issue 33 point 1: the reply with the full link stayed in outbox.text (and backups).
    answer = await web_env.one(dm("/web"))
    assert LINK.search(answer.text)
    async with web_env.store.transaction() as db:
        await chat_store.mark_sent(db, answer, "delivered-1")
    found = await web_env.store.reader.fetchall(
        "SELECT text FROM outbox WHERE text LIKE '%signin/%'"
    )
    assert found == []
    [row] = await web_env.store.reader.fetchall(
        "SELECT text FROM outbox WHERE id = ?", (answer.id,)
    )
    assert "sign-in link was delivered here" in row["text"]
