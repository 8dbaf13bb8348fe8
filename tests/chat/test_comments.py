"""Line comments from chat: `/comment`, a reply quoting lines of a /diff file message,
a requester's comment as a request, and what the board does with each by phase."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.domain.phases import Phase
from chatbot.notify.notifier import Destination, Notifier
from chatbot.store import comments as comment_store
from chatbot.store import jobs as job_store
from chatbot.store import talk as talk_store
from tests.chat.conftest import REQUESTER, STRANGER, Env, msg
from tests.chat.test_lookups import commit

CODE = "".join(f"value_{n} = {n}\n" for n in range(1, 21))


@pytest.fixture
async def reviewed(env: Env) -> str:
    """A card in review of a commit that adds app.py, its review job queued."""
    repo = env.board.repo
    commit(repo, {"README.md": "hello\n"}, "Start")
    head = commit(repo, {"app.py": CODE}, "Add the app")
    card = await env.card("app", Phase.REVIEWING, commit_hash=head)
    async with env.store.transaction() as db:
        await job_store.enqueue(db, kind="reviewer", lane="light", card_id=card.id)
    return head


async def comments(env: Env) -> list[comment_store.LineComment]:
    card = await env.board.reads.card("app")
    return await env.board.comments.of_card(card)


async def test_a_comment_on_a_card_in_review_starts_the_fixer_and_stops_the_review(
    env: Env, reviewed: str
) -> None:
    env.board.listeners.append(Notifier(env.store, [Destination("xmpp", "room@x.org")]))
    rows = await env.said(msg("/comment app app.py:3-4 use a tuple here"))
    [made] = await comments(env)
    assert (made.path, made.line_start, made.line_end) == ("app.py", 3, 4)
    assert made.quote == "value_3 = 3\nvalue_4 = 4"  # the code, from the diff itself
    assert made.commit_hash == reviewed and made.author == "xmpp:owner@example.org"
    assert await env.phase("app") == Phase.FIXER_RUNNING
    jobs = await env.store.reader.fetchall("SELECT kind, state FROM jobs ORDER BY id")
    assert [tuple(j) for j in jobs] == [("reviewer", "cancelled"), ("fixer", "queued")]
    texts = [r.text for r in rows]
    # Said in the card's room (the notifier), answered to the owner.
    notice = next(t for t in texts if t.startswith("💬 app: xmpp:owner@example.org on app.py:3-4"))
    assert "value_3 = 3" in notice and "use a tuple here" in notice
    assert any("comment 1 on app.py:3-4 kept; the fixer starts" in t for t in texts)


async def test_a_reply_quoting_lines_of_a_diff_message_is_a_comment_on_them(
    env: Env, reviewed: str
) -> None:
    summary, file = await env.said(msg("/diff app"))
    await env.sent(file, "diff-1")
    quote = "\n".join(line for line in file.text.splitlines() if "value_7 = 7" in line)
    assert quote.strip().startswith("7 + value_7")
    await env.said(msg(f"> {quote}\nname it seven", reply_to="diff-1"))
    [made] = await comments(env)
    assert (made.path, made.line_start, made.quote, made.body) == (
        "app.py",
        7,
        "value_7 = 7",
        "name it seven",
    )
    assert await env.phase("app") == Phase.FIXER_RUNNING


async def test_a_reply_whose_quote_the_transport_cut_still_names_the_line(
    env: Env, reviewed: str
) -> None:
    _, file = await env.said(msg("/diff app"))
    await env.sent(file, "diff-1")
    event = msg("and this one", reply_to="diff-1")
    object.__setattr__(event, "quoted", ">   12 + value_12 = 12\n")
    await env.said(event)
    [made] = await comments(env)
    assert (made.line_start, made.body) == (12, "and this one")


async def test_a_requesters_comment_is_a_request_an_owner_accepts(env: Env, reviewed: str) -> None:
    [asked] = await env.said(msg("/comment app app.py:2 why two?", REQUESTER))
    assert "request" in asked.text.lower() and "/comment app app.py:2 why two?" in asked.text
    assert await comments(env) == []
    assert await env.phase("app") == Phase.REVIEWING
    await env.said(msg("/accept 1"))
    [made] = await comments(env)
    assert (made.line_start, made.body, made.author) == (2, "why two?", "xmpp:owner@example.org")
    assert await env.phase("app") == Phase.FIXER_RUNNING


async def test_a_stranger_cannot_comment(env: Env, reviewed: str) -> None:
    await env.said(msg("/comment app app.py:2 mine now", STRANGER))
    assert await comments(env) == []
    assert await env.phase("app") == Phase.REVIEWING


@pytest.mark.parametrize(
    "line, said",
    [
        (
            "/comment app app.py:40 x",
            "line 40 of app.py is not in the change (its lines there: 1-20)",
        ),
        ("/comment app nope.py:1 x", "nope.py is not in the change of app"),
        ("/comment app app.py:5-1 x", "5-1 is not a range of lines"),
        ("/comment app app.py:1-30 x", "a comment covers at most 20 lines"),
        ("/comment app app.py:x:: x", '"app.py:x::" is not a place in the change'),
    ],
)
async def test_a_bad_place_is_refused_naming_why_and_nothing_changes(
    env: Env, reviewed: str, line: str, said: str
) -> None:
    answer = await env.one(msg(line))
    assert said in answer.text and "/diff app" in answer.text
    assert await comments(env) == []
    assert await env.phase("app") == Phase.REVIEWING


async def test_a_comment_on_a_card_without_a_commit_or_in_a_phase_that_takes_none(
    env: Env, reviewed: str
) -> None:
    await env.card("early")
    answer = await env.one(msg("/comment early app.py:1 x"))
    assert "early has no commit to comment on yet" in answer.text
    await env.card("shipped", Phase.DEPLOYED, commit_hash=reviewed)
    answer = await env.one(msg("/comment shipped app.py:1 x"))
    assert "shipped is deployed: a comment goes to its agent in review" in answer.text


async def test_a_reply_to_an_old_diff_after_a_new_commit_is_refused(
    env: Env, reviewed: str, tmp_path: Path
) -> None:
    _, file = await env.said(msg("/diff app"))
    await env.sent(file, "diff-1")
    newer = commit(env.board.repo, {"app.py": CODE + "more = 1\n"}, "More")
    async with env.store.transaction() as db:
        await db.execute("UPDATE cards SET commit_hash = ? WHERE slug = 'app'", (newer,))
    answer = await env.one(msg(">    3 + value_3 = 3\nhm", reply_to="diff-1"))
    assert "has a newer commit" in answer.text and "/diff app" in answer.text
    assert await comments(env) == []


async def test_a_comment_on_a_running_builder_is_a_steer(env: Env, reviewed: str) -> None:
    card = await env.board.reads.card("app")
    async with env.store.transaction() as db:
        await db.execute("UPDATE cards SET phase = 'building' WHERE id = ?", (card.id,))
        await db.execute("UPDATE jobs SET kind = 'builder', state = 'running', talks = 1")
    answer = await env.one(msg("/comment app app.py:9 nine is wrong"))
    assert "comment 1 on app.py:9 sent to the running agent" in answer.text
    [made] = await comments(env)
    assert made.state == "sent"
    [job] = await env.jobs()
    [steer] = await talk_store.inbox(env.store.reader, [job.id])
    assert steer.kind == "steer" and "app.py:9" in steer.text and "value_9 = 9" in steer.text
    assert await env.phase("app") == Phase.BUILDING


async def test_hostile_code_in_a_comment_quote_stays_inert(env: Env) -> None:
    repo = env.board.repo
    commit(repo, {"README.md": "x\n"}, "Start")
    hostile = "<script>alert(1)</script> \x1b[31m ```` \u202e\n"
    head = commit(repo, {"evil.html": hostile}, "Evil")
    await env.card("evil", Phase.FAILED, commit_hash=head, failure_stage="review")
    env.board.listeners.append(Notifier(env.store, [Destination("matrix", "!r:x.org")]))
    rows = await env.said(msg("/comment evil evil.html:1 what is this"))
    notice = next(r for r in rows if r.text.startswith("💬"))
    assert "\x1b" not in notice.text and "\u202e" not in notice.text
    assert notice.html is not None and "<script>" not in notice.html
    assert "&lt;script&gt;" in notice.html
