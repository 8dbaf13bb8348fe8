"""Keeping files (issue 36) on both engines: sniffed, limited, content-addressed, tied to
cards with an event, listed; the quota drops finished cards' files first, oldest first,
and refuses with the way forward when that is not enough."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chatbot.board import (
    AttachPurpose,
    BoardService,
    FileGone,
    FileKind,
    FileLimits,
    FileRefused,
    UnknownCard,
)
from chatbot.domain.phases import Kind, Phase
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store.blobs import BlobStore
from tests.board import file_samples as samples

MB = 1024 * 1024
ORIGIN = {"transport": "xmpp", "chat": "owner@example.org", "message_id": "m1"}
OWNER = "xmpp:owner@example.org"


def _board(store: Store, repo: Path, folder: Path, **limits: float) -> BoardService:
    return BoardService(store, repo, files=FileLimits(folder=folder, **limits))  # type: ignore[arg-type]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "state" / "files"


@pytest.fixture
def board(store: Store, repo: Path, folder: Path) -> BoardService:
    return _board(store, repo, folder)


async def _card(board: BoardService, slug: str, phase: Phase = Phase.PLANNED) -> None:
    async with board.store.transaction() as db:
        await card_store.create(db, slug, Kind.INTENT, phase, actor="test", title=slug)


async def _keep(board: BoardService, data: bytes, name: str, **more: object):
    given = {"declared_type": "", "actor": OWNER, "origin": ORIGIN, "encrypted": False}
    return await board.files.keep(data, name=name, **{**given, **more})  # type: ignore[arg-type]


async def test_a_file_is_kept_as_its_bytes_say_and_loose_until_attached(
    board: BoardService, folder: Path
) -> None:
    shot = samples.picture("PNG")
    kept = await _keep(board, shot, "shot.txt", declared_type="text/plain", encrypted=True)
    assert (kept.kind, kept.content_type) == (FileKind.IMAGE, "image/png")
    assert (kept.name, kept.size, kept.actor) == ("shot.txt.png", len(shot), OWNER)
    assert (kept.card_id, kept.purpose, kept.encrypted, kept.gone) == (None, "", True, False)
    assert [f.id for f in await board.files.loose(OWNER)] == [kept.id]
    assert await board.files.loose("xmpp:someone@example.org") == []
    assert await board.files.data(kept.id) == shot
    assert (folder / kept.sha256[:2] / kept.sha256[2:4] / kept.sha256).read_bytes() == shot
    row = await board.store.reader.fetchone(
        "SELECT transport, chat, message_id FROM attachments WHERE id = ?", (kept.id,)
    )
    assert tuple(row) == ("xmpp", "owner@example.org", "m1")


async def test_refused_files_leave_nothing_behind(board: BoardService, folder: Path) -> None:
    with pytest.raises(FileRefused) as refused:
        await _keep(board, samples.elf(), "screenshot.png", declared_type="image/png")
    assert str(refused.value).startswith("took it for a Linux executable; the bot takes pictures")
    with pytest.raises(
        FileRefused, match=r"claims 10,000,000,000 pixels; .* \(\[files\] max_pixels\)"
    ):
        await _keep(board, samples.png_claiming(100_000, 100_000), "bomb.png")
    rows = await board.store.reader.fetchone("SELECT count(*) FROM attachments")
    assert rows[0] == 0
    assert not folder.exists() or BlobStore(folder).total_size() == 0


async def test_a_file_over_the_size_limit_is_refused_naming_it(
    store: Store, repo: Path, folder: Path
) -> None:
    board = _board(store, repo, folder, max_bytes=1000)
    with pytest.raises(FileRefused) as refused:
        await _keep(board, b"x" * 1001, "big.log")
    assert str(refused.value) == (
        "it is 1001 B, more than the 1000 B one file may have ([files] max_size_mb)"
    )


async def test_names_are_made_safe_to_show(board: BoardService) -> None:
    text = b"a log\n"
    names = [
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\me\\notes.md", "notes.md"),
        ("evil\u202egpj.exe", "evilgpj.exe"),  # a bidi override gone
        ("line\nbreak\x00.txt", "linebreak.txt"),
        ("...", "text.txt"),
        ("page.html", "page.html.txt"),
        ("x" * 300 + ".patch", "x" * 113 + "….patch"),
    ]
    for sent, shown in names:
        assert (await _keep(board, text, sent)).name == shown


async def test_attaching_ties_files_to_the_card_with_an_event(board: BoardService) -> None:
    await _card(board, "login-bug")
    await _card(board, "other")
    shot = await _keep(board, samples.picture("PNG"), "screenshot.png")
    log = await _keep(board, b"Traceback: boom\n", "build.log")
    with pytest.raises(UnknownCard):
        await board.files.attach([shot.id], "no-such-card", purpose=AttachPurpose.CARD, actor=OWNER)
    attached = await board.files.attach(
        [shot.id, log.id], "login-bug", purpose=AttachPurpose.STEER, actor=OWNER
    )
    assert [(f.name, f.purpose, f.card_id is not None) for f in attached] == [
        ("screenshot.png", "steer", True),
        ("build.log", "steer", True),
    ]
    assert await board.files.loose(OWNER) == []
    assert [f.id for f in await board.files.of_card("login-bug")] == [shot.id, log.id]
    view = await board.reads.view("login-bug")
    last = view.events[-1]
    assert (last.action, last.actor) == ("attach", OWNER)
    assert last.reason == (
        f"attached screenshot.png ({shot.size} B), build.log (16 B) with a steer"
    )
    # The same file for another card: a second row over the same bytes.
    again = await board.files.attach(
        [shot.id], "other", purpose=AttachPurpose.ANSWER, actor=OWNER, question_id=None
    )
    assert again[0].id != shot.id and again[0].sha256 == shot.sha256
    assert [f.id for f in await board.files.of_card("login-bug")] == [shot.id, log.id]
    assert await board.files.data(again[0].id) == await board.files.data(shot.id)


async def test_a_loose_file_waits_only_keep_loose_minutes(
    store: Store, repo: Path, folder: Path
) -> None:
    board = _board(store, repo, folder, keep_loose_s=60)
    kept = await _keep(board, b"notes\n", "notes.txt")
    async with store.transaction() as db:
        await db.execute(
            "UPDATE attachments SET created_at = created_at - 61 WHERE id = ?", (kept.id,)
        )
    assert await board.files.loose(OWNER) == []


async def test_an_outgoing_file_is_never_refused_for_its_kind(board: BoardService) -> None:
    patch = await board.files.keep_outgoing(
        b"--- a/x\n+++ b/x\n", name="card.patch", content_type="text/x-diff"
    )
    binary = await board.files.keep_outgoing(
        samples.elf(), name="tool", content_type="application/octet-stream"
    )
    assert (patch.kind, patch.content_type, patch.purpose, patch.actor) == (
        FileKind.TEXT,
        "text/plain; charset=utf-8",
        "outgoing",
        "",
    )
    assert binary.content_type == "application/octet-stream"
    assert await board.files.data(binary.id) == samples.elf()


def _text(size: int, fill: str) -> bytes:
    return (fill * size).encode()


async def test_the_quota_drops_finished_cards_files_first_oldest_first(
    store: Store, repo: Path, folder: Path
) -> None:
    board = _board(store, repo, folder, quota_bytes=3 * MB)
    await _card(board, "shipped", Phase.DEPLOYED)
    await _card(board, "working", Phase.BUILDING)
    old = await _keep(board, _text(MB, "a"), "a.log")
    newer = await _keep(board, _text(MB, "b"), "b.log")
    busy = await _keep(board, _text(MB, "c"), "c.log")
    await board.files.attach([old.id, newer.id], "shipped", purpose=AttachPurpose.CARD, actor=OWNER)
    await board.files.attach([busy.id], "working", purpose=AttachPurpose.CARD, actor=OWNER)
    # Same bytes again take no more room: nothing is dropped for them.
    same = await _keep(board, _text(MB, "c"), "again.log")
    assert [f.gone for f in await board.files.of_card("shipped")] == [False, False]
    fresh = await _keep(board, _text(MB, "d"), "d.log")
    files = {f.name: f.gone for f in await board.files.of_card("shipped")}
    assert files == {"a.log": True, "b.log": False}
    assert not (folder / old.sha256[:2] / old.sha256[2:4] / old.sha256).exists()
    with pytest.raises(FileGone, match=r"a.log was dropped on .* \(\[files\] quota_mb\)"):
        await board.files.data(old.id)
    for kept in (newer, busy, same, fresh):
        assert len(await board.files.data(kept.id)) == MB
    # The next one drops b.log; then only a working card's files are left: refused.
    await board.files.attach(
        [same.id, fresh.id], "working", purpose=AttachPurpose.CARD, actor=OWNER
    )
    await _keep(board, _text(MB, "e"), "e.log")
    with pytest.raises(FileRefused) as refused:
        await _keep(board, _text(MB, "f"), "f.log")
    assert str(refused.value) == (
        "the bot's file store is full (3 of 3 MB): archive finished cards or raise [files] quota_mb"
    )
    assert {f.name: f.gone for f in await board.files.of_card("shipped")} == {
        "a.log": True,
        "b.log": True,
    }
    assert BlobStore(folder).total_size() == 3 * MB


async def test_the_quota_drops_old_loose_files_but_not_young_ones(
    store: Store, repo: Path, folder: Path
) -> None:
    board = _board(store, repo, folder, quota_bytes=2 * MB, keep_loose_s=60)
    waiting = await _keep(board, _text(MB, "a"), "a.log")
    young = await _keep(board, _text(MB, "b"), "b.log")
    with pytest.raises(FileRefused, match="file store is full"):
        await _keep(board, _text(MB, "c"), "c.log")
    async with store.transaction() as db:
        await db.execute(
            "UPDATE attachments SET created_at = created_at - 61 WHERE id = ?", (waiting.id,)
        )
    await _keep(board, _text(MB, "c"), "c.log")
    with pytest.raises(FileGone):
        await board.files.data(waiting.id)
    assert len(await board.files.data(young.id)) == MB


def test_the_folder_is_private_even_with_a_wide_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        BlobStore(tmp_path / "files").open().put(b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "files").stat().st_mode & 0o777 == 0o700
