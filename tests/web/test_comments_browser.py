"""A line comment in a real headless Chromium (issue 35 point 2), on a board whose worker
runs the scripted stand-ins: a signed-in owner opens an approved card, reads its diff,
picks a line by its number, writes a comment; the room is told, the fixer's prompt holds
the file, the line, the quoted code and the words, and the review of the fixer's commit
lists the comment as answered, as does the page."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from chatbot.chat.intake import ChatIntake
from chatbot.chat.web_acts import WebActs
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.notify.notifier import Destination, Notifier
from chatbot.web import WebSettings
from chatbot.web.server import WebBoard
from tests.pipeline.harness import builder_answer, direct, review_answer, start
from tests.pipeline.support import kill_strays, run_idle
from tests.web.browser import Browser
from tests.web.test_owners_browser import click, type_in

INTENT = "# Greeting module\n\nAdd `greet.py` with a `greet()` function.\n"
ROOM = Destination("xmpp", "board@conference.localhost")
OWNER = "xmpp:owner@localhost"
TURNS = [
    {"match": "OPERATOR-DECISION", "answer": direct("light")},
    {
        "match": "line comments to address",
        "cli": "codex",
        "answer": builder_answer("Say hello"),
        "files": {"greet.py": "def greet():\n    return 'hello'\n"},
    },
    {
        "match": "COMMIT-MESSAGE",
        "cli": "codex",
        "answer": builder_answer("Add greet()"),
        "files": {"greet.py": "def greet():\n    return 'hi'\n"},
    },
    {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer(), "repeat": True},
]


async def test_an_owner_comments_on_a_line_in_chromium_and_the_fixer_answers_it(
    browser: Browser, tmp_path: Path, monkeypatch
) -> None:
    h = await start(tmp_path, TURNS, {"greeting": INTENT}, monkeypatch=monkeypatch)
    notifier = Notifier(h.store, [ROOM])
    h.board.listeners.append(notifier)
    chat = ChatIntake(h.board, owners=["owner@localhost"])
    web = WebBoard(
        h.board,
        WebSettings("127.0.0.1", 0, secrets.token_urlsafe(24), "en"),
        sessions=h.board.web_sessions,
        acting=WebActs(chat),
        spend=h.board.budget.spend_report,
    )
    await web.start()
    try:
        await h.board.act("greeting", Action.START, actor=OWNER)
        await run_idle(h)
        card = await h.board.reads.card("greeting")
        assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail

        link = (await h.board.web_sessions.issue(OWNER)).token
        await browser.open(f"{web.url}signin/{link}")
        await click(browser, "#signin button")
        await browser.open(f"{web.url}card/greeting")
        assert "return 'hi'" in await browser.text("#change")
        # The line's number is a link: the page comes back with it picked in the form.
        await click(browser, "#file-0 a[href='?line=0:2#comment']")
        assert (
            await browser.js("return document.querySelector('#comment [name=start]').value") == "2"
        )
        await type_in(browser, "#comment textarea", "say hello, not hi")
        await click(browser, "#comment button")
        assert "comment 1 on greet.py:2 kept" in await browser.text("#said")

        said = [r[0] for r in await h.store.reader.fetchall("SELECT text FROM outbox")]
        notice = next(t for t in said if t.startswith("💬 greeting:"))
        assert "greet.py:2" in notice and "return 'hi'" in notice and "say hello" in notice

        await run_idle(h)
        card = await h.board.reads.card("greeting")
        assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
        [fixer] = h.prompts_of("line comments to address")
        assert '"file": "greet.py"' in fixer and '"lines": [\n      2,\n      2\n    ]' in fixer
        assert '"code": "    return \'hi\'"' in fixer and '"text": "say hello, not hi"' in fixer
        last_review = h.prompts_of("REVIEW-RESULT")[-1]
        assert "say hello, not hi" in last_review

        await browser.open(f"{web.url}card/greeting")
        listed = await browser.text("#comments")
        assert "greet.py:2" in listed and f"answered in {card.commit_hash[:12]}" in listed
        assert await browser.console_errors() == []
        assert json.dumps(card.commit_hash)  # the fixer's commit is the card's now
    finally:
        await web.stop()
        kill_strays(h)
        await h.store.close()
