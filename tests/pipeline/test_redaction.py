"""No secret leaves in text (issue 32): an agent that put the value of one of the bot's
secret files into its report, its commit message, its review or its question has it
replaced by `[redacted: <key>]` in the room, on the web page, in git and in every table
of the store; a change that holds one is not committed, and the card says which key
and how to go on. The stand-in agents play the leaking agent."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.web import WebSettings
from chatbot.web.server import WebBoard
from tests.pipeline.harness import (
    builder_answer,
    direct,
    git,
    operator_answer,
    review_answer,
    start,
)
from tests.pipeline.room import open_room

pytestmark = pytest.mark.sqlite_only  # every table of the store is read as SQLite's

OWNER = "owner@example.org"
SECRET = "sk-ant-api03-TOPSECRET-0123456789abcdef"
KEY = "runtimes.claude.api_key_file"
REDACTED = f"[redacted: {KEY}]"
OPERATE = {"match": "OPERATOR-DECISION", "answer": direct("light"), "repeat": True}


async def harness_with_a_secret(tmp_path: Path, monkeypatch, turns: list[dict], slug: str):
    """The harness with one secret file in its configuration: claude's key."""
    (tmp_path / "claude.key").write_text(SECRET + "\n")
    (tmp_path / "claude.key").chmod(0o600)
    return await start(
        tmp_path,
        turns,
        {slug: f"# {slug}\n\nDo it.\n"},
        monkeypatch=monkeypatch,
        edit=lambda text: text.replace(
            "[runtimes.claude]\n", '[runtimes.claude]\napi_key_file = "claude.key"\n', 1
        ),
    )


async def every_stored_text(h) -> str:
    """Every value of every table of the store, as text."""
    tables = await h.store.reader.fetchall(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )
    found = []
    for (table,) in [tuple(row) for row in tables]:
        for row in await h.store.reader.fetchall(f'SELECT * FROM "{table}"'):
            found.append(" ".join(str(value) for value in tuple(row)))
    return "\n".join(found)


async def web_page(h, path: str) -> str:
    web = WebBoard(h.board, WebSettings("127.0.0.1", 0, "a-reader-token-long-enough", "en"))
    await web.start()
    try:
        async with aiohttp.ClientSession() as session:
            headers = {"Authorization": "Bearer a-reader-token-long-enough"}
            async with session.get(web.url.rstrip("/") + path, headers=headers) as response:
                assert response.status == 200, await response.text()
                return await response.text()
    finally:
        await web.stop()


async def test_a_secret_in_a_report_a_commit_message_and_a_review_is_redacted(
    tmp_path: Path, monkeypatch
) -> None:
    turns = [
        OPERATE,
        {
            "match": "docs/intent/leaky.md",
            "cli": "codex",
            "answer": builder_answer(f"Add greeting ({SECRET})", f"Done. The key is {SECRET}."),
            "files": {"greeting.txt": "hello\n"},
        },
        {
            "match": "REVIEW-RESULT",
            "answer": review_answer("approve", f"Fine; I also saw {SECRET}."),
            "repeat": True,
        },
    ]
    h = await harness_with_a_secret(tmp_path, monkeypatch, turns, "leaky")
    room = open_room(h)
    try:
        await h.board.act("leaky", Action.START, actor=OWNER)
        await h.run_until_idle()
        card = await h.board.reads.card("leaky")
        assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail

        posted = "\n".join(row.text for row in await room.rows())
        assert SECRET not in posted
        assert f"Add greeting ({REDACTED})" in posted and f"The key is {REDACTED}" in posted
        stored = await every_stored_text(h)
        assert SECRET not in stored and REDACTED in stored
        message = git(h.repo, "log", "-1", "--format=%B", "card/leaky")
        assert SECRET not in message and REDACTED in message
        assert SECRET not in (h.repo / "docs" / "review" / "leaky.md").read_text()
        page = await web_page(h, "/card/leaky")
        assert SECRET not in page and "[redacted:" in page
    finally:
        await h.store.close()


async def test_a_secret_in_a_question_is_redacted(tmp_path: Path, monkeypatch) -> None:
    ask = f"Should I use the key {SECRET}?\noptions: yes | no"
    decision = {"decision": "needs_human", "reason": "unclear", "human_action": ask}
    turns = [{"match": "OPERATOR-DECISION", "answer": operator_answer(decision)}]
    h = await harness_with_a_secret(tmp_path, monkeypatch, turns, "asks")
    room = open_room(h)
    try:
        await h.board.act("asks", Action.START, actor=OWNER)
        await h.run_until_idle()
        assert (await h.board.reads.card("asks")).phase is Phase.NEEDS_HUMAN
        posted = "\n".join(row.text for row in await room.rows())
        assert f"Should I use the key {REDACTED}?" in posted and SECRET not in posted
        assert SECRET not in await every_stored_text(h)
        assert SECRET not in await web_page(h, "/card/asks")
    finally:
        await h.store.close()


async def test_a_change_holding_a_secret_is_not_committed(tmp_path: Path, monkeypatch) -> None:
    turns = [
        OPERATE,
        {
            "match": "docs/intent/keyed.md",
            "cli": "codex",
            "answer": builder_answer("Add the configuration"),
            "files": {"settings.ini": f"[provider]\nkey = {SECRET}\n"},
        },
    ]
    h = await harness_with_a_secret(tmp_path, monkeypatch, turns, "keyed")
    room = open_room(h)
    try:
        base = git(h.repo, "rev-parse", "main")
        await h.board.act("keyed", Action.START, actor=OWNER)
        await h.run_until_idle()
        card = await h.board.reads.card("keyed")
        assert card.phase is Phase.FAILED
        assert card.failure_detail is not None
        assert KEY in card.failure_detail and "/fix" in card.failure_detail
        assert SECRET not in card.failure_detail
        assert git(h.repo, "rev-parse", "card/keyed") == base  # nothing committed
        posted = "\n".join(row.text for row in await room.rows())
        assert SECRET not in posted and KEY in posted
    finally:
        await h.store.close()
