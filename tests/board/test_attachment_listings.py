"""A card's files are listed (issue 36) in chat's `/status <slug>`, on the card's web page
and in `chatbot card <slug> --json`: name, kind, size, who, when, what for; a dropped
file says so; a hostile name stays text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.app.cli_reads import card_command
from chatbot.app.views import view_json
from chatbot.board import AttachPurpose, BoardService, FileLimits
from chatbot.chat import render
from chatbot.domain.phases import Kind, Phase
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.web.card_page import CardPage, RepoText, card_main
from chatbot.web.texts import Texts
from tests.board import file_samples as samples

OWNER = "xmpp:owner@example.org"
HOSTILE = '<img src=x onerror="alert(1)">.png'


@pytest.fixture
async def board(store: Store, repo: Path, tmp_path: Path) -> BoardService:
    board = BoardService(store, repo, files=FileLimits(folder=tmp_path / "files"))
    async with store.transaction() as db:
        await card_store.create(db, "login-bug", Kind.INTENT, Phase.BUILDING, actor="t")
    origin = {"transport": "xmpp", "chat": "owner@example.org", "message_id": "m1"}
    kept = [
        await board.files.keep(
            data,
            name=name,
            declared_type="",
            actor=OWNER,
            origin=origin,
            encrypted=False,
        )
        for data, name in ((samples.picture(), HOSTILE), (b"Traceback\n", "build.log"))
    ]
    await board.files.attach([kept[0].id], "login-bug", purpose=AttachPurpose.STEER, actor=OWNER)
    await board.files.attach([kept[1].id], "login-bug", purpose=AttachPurpose.CARD, actor=OWNER)
    patch = await board.files.keep_outgoing(
        b"+a\n", name="login-bug.patch", content_type="text/x-diff"
    )
    await board.files.attach([patch.id], "login-bug", purpose=AttachPurpose.OUTGOING, actor="board")
    async with store.transaction() as db:  # the quota dropped the log
        await db.execute("UPDATE attachments SET gone_at = 1 WHERE id = ?", (kept[1].id,))
    return board


async def test_status_of_a_card_lists_its_files(board: BoardService) -> None:
    view = await board.reads.view("login-bug")
    text = render.card(view, [], "en")
    lines = [line for line in text.splitlines() if "📎" in line or line == "files:"]
    assert lines[0] == "files:"
    assert lines[1].startswith(f"  📎 {HOSTILE} — picture, ")
    assert lines[1].endswith(
        f", from {OWNER}, {render.when(view.attachments[0].created_at)}, with a steer"
    )
    assert lines[2].startswith("  📎 build.log — text file, 10 B, from ")
    assert lines[2].endswith("for the card; dropped from the file store to make room")
    assert "  📎 login-bug.patch — text file, 3 B, from the bot, " in lines[3]
    assert lines[3].endswith("sent by the bot")
    german = render.card(view, [], "de")
    assert "Dateien:" in german and "mit einer Lenkung" in german and "entfernt" in german
    # The card's history says what was attached.
    assert "file attached" in render.history(view, "en")


async def test_the_card_page_lists_files_as_inert_text(board: BoardService) -> None:
    view = await board.reads.view("login-bug")
    page = str(card_main(CardPage(view=view, runs=[], intent=RepoText("i.md", "x")), Texts("en")))
    section = page[page.index('<section id="attachments">') :]
    section = section[: section.index("</section>")]
    assert "<h2>Attachments</h2>" in section
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;.png" in section
    assert "<img" not in section  # no name becomes markup, no picture is inlined
    assert "dropped from the file store to make room" in section
    assert section.count("<tr>") == 4  # the head and three files
    # A card without files has no section at all.
    async with board.store.transaction() as db:
        await card_store.create(db, "empty", Kind.INTENT, Phase.PLANNED, actor="t")
    empty = await board.reads.view("empty")
    page = str(card_main(CardPage(view=empty, runs=[], intent=RepoText("i.md", "x")), Texts("en")))
    assert 'id="attachments"' not in page


async def test_card_json_has_an_attachments_list(
    board: BoardService, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await card_command(board, "login-bug", True, "en", "/") == 0
    document = json.loads(capsys.readouterr().out)
    files = document["attachments"]
    assert [(f["name"], f["kind"], f["purpose"], f["gone"], f["by"]) for f in files] == [
        (HOSTILE, "image", "steer", False, OWNER),
        ("build.log", "text", "card", True, OWNER),
        ("login-bug.patch", "text", "outgoing", False, None),
    ]
    assert files[0]["content_type"] == "image/png" and len(files[0]["sha256"]) == 64
    # Every card of `chatbot cards --json` carries its files too.
    views = {v.card.slug: v for v in await board.reads.all_views()}
    assert view_json(views["login-bug"])["attachments"] == files
