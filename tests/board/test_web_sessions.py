"""Web sign-in links and sessions in the store, on SQLite and PostgreSQL: one use per
link, ten minutes, digests only, revoking per owner."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from chatbot.board import BoardService
from chatbot.board.web_sessions import LINK_VALID_S, LinkRefused

OWNER = "xmpp:owner@example.org"
OTHER = "matrix:@other:example.org"


async def test_a_link_signs_in_once_and_only_its_digest_is_kept(board: BoardService) -> None:
    sessions = board.web_sessions
    link = await sessions.issue(OWNER)
    assert len(link.token) >= 43
    found = await sessions.link(link.token)
    assert found.identity == OWNER and found.signed_in_at is None
    # Two browsers race with the same link: exactly one gets a session.
    results = await asyncio.gather(
        sessions.sign_in(link.token, "A"),
        sessions.sign_in(link.token, "B"),
        return_exceptions=True,
    )
    won = [r for r in results if not isinstance(r, BaseException)]
    lost = [r for r in results if isinstance(r, LinkRefused)]
    assert len(won) == 1 and len(lost) == 1 and lost[0].why == "used"
    signed = won[0]
    rows = await board.store.reader.fetchall("SELECT * FROM web_sessions")
    stored = " ".join(str(v) for v in rows[0])
    assert link.token not in stored and signed.cookie not in stored
    assert hashlib.sha256(signed.cookie.encode()).hexdigest() in stored
    assert (await sessions.session(signed.cookie)).identity == OWNER
    assert await sessions.session("not-a-cookie") is None
    with pytest.raises(LinkRefused, match="used"):
        await sessions.link(link.token)


async def test_links_expire_and_revoking_ends_one_owners_sessions(board: BoardService) -> None:
    sessions = board.web_sessions
    late = await sessions.issue(OWNER)
    real = sessions.clock
    sessions.clock = lambda: real() + LINK_VALID_S + 1
    with pytest.raises(LinkRefused, match="expired"):
        await sessions.sign_in(late.token, "A")
    sessions.clock = real
    mine = [await sessions.sign_in((await sessions.issue(OWNER)).token, ua) for ua in "AB"]
    theirs = await sessions.sign_in((await sessions.issue(OTHER)).token, "C")
    assert [s.id for s in await sessions.of(OWNER)] == [m.session.id for m in mine]
    assert await sessions.revoke(OWNER, theirs.session.id) == 0
    assert await sessions.revoke(OWNER, mine[0].session.id) == 1
    assert await sessions.session(mine[0].cookie) is None
    unused = await sessions.issue(OWNER)
    # The other session, and both links never used (the "late" one is still valid now).
    assert await sessions.revoke(OWNER) == 3
    assert await sessions.of(OWNER) == []
    with pytest.raises(LinkRefused, match="revoked"):
        await sessions.sign_in(unused.token, "D")
    assert (await sessions.session(theirs.cookie)).identity == OTHER


async def test_a_removed_owners_sessions_and_links_end(board: BoardService) -> None:
    # Issue 33 point 2: the bot ends them at its start, when the owner list no longer
    # names them (app/serve.py start_web).
    sessions = board.web_sessions
    kept = await sessions.sign_in((await sessions.issue(OWNER)).token, "A")
    removed = await sessions.sign_in((await sessions.issue(OTHER)).token, "B")
    unused = await sessions.issue(OTHER)
    assert await sessions.keep_only([OWNER]) == 2
    assert await sessions.session(removed.cookie) is None
    with pytest.raises(LinkRefused, match="revoked"):
        await sessions.sign_in(unused.token, "C")
    assert (await sessions.session(kept.cookie)).identity == OWNER
    assert await sessions.keep_only([OWNER]) == 0


async def test_a_new_board_token_ends_every_session_and_link(board: BoardService) -> None:
    # Issue 33 point 3: sessions outlived the token file they were made under.
    from chatbot.board.web_sessions import TOKEN_MARK_KEY
    from chatbot.store import kv

    sessions = board.web_sessions
    signed = await sessions.sign_in((await sessions.issue(OWNER)).token, "A")
    # The first start after an upgrade knows no earlier token: it only notes this one.
    assert await sessions.keep_for_token("first token") == 0
    mark = await kv.get_value(board.store.reader, TOKEN_MARK_KEY)
    assert mark is not None and "first token" not in mark
    assert await sessions.keep_for_token("first token") == 0
    assert (await sessions.session(signed.cookie)).identity == OWNER
    unused = await sessions.issue(OTHER)
    assert await sessions.keep_for_token("second token") == 2
    assert await sessions.session(signed.cookie) is None
    with pytest.raises(LinkRefused, match="revoked"):
        await sessions.sign_in(unused.token, "B")
    # Back to the first one is a change too: sessions made under the second end.
    again = await sessions.sign_in((await sessions.issue(OWNER)).token, "C")
    assert await sessions.keep_for_token("first token") == 1
    assert await sessions.session(again.cookie) is None
