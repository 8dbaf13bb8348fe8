"""A card's change on its web page, from a real git repository: each file with what it
became (new, deleted, renamed, mode, binary), its lines highlighted on the server, and
the whole patch as a download. The agent's text is hostile here: HTML and script, control
and format characters, a 10 MB line, bytes that are not UTF-8. All of it is shown inert
and bounded."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import subprocess
import time
from html import unescape
from pathlib import Path

import aiohttp
import pytest

from chatbot.board import BoardService
from chatbot.store import Store
from chatbot.web import WebSettings, diff_section
from chatbot.web.change_cache import ChangeCache
from chatbot.web.server import WebBoard

HOSTILE = "<script>alert(1)</script>\x1b[31m\u202eevil\u200b"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
async def changed(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / "docs" / "intent").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "docs" / "intent" / "report.md").write_text("# Report\n\nBuild it.\n")
    (repo / "app.py").write_text("def greet():\n    return 'hi'\n")
    (repo / "old_name.txt").write_text("same content\n" * 20)
    (repo / "gone.txt").write_text("bye\n")
    (repo / "run.sh").write_text("#!/bin/sh\necho run\n")
    commit_all(repo, "base")
    # The builder's commit.
    (repo / "app.py").write_text("def greet(name):\n    # say hello\n    return f'hi {name}'\n")
    (repo / "old_name.txt").rename(repo / "new_name.txt")
    (repo / "gone.txt").unlink()
    (repo / "run.sh").chmod(0o755)
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    (repo / "hostile.html").write_text(f"{HOSTILE}\n")
    (repo / "latin1.txt").write_bytes(b"caf\xe9 \xff\xfe\n")
    first = commit_all(repo, "builder")
    # A fixer's commit on top: the page shows both, from before the first.
    (repo / "huge.min.js").write_text("x" * 10_000_000 + "\n")
    last = commit_all(repo, "fixer")
    store = await Store.open(tmp_path / "board.sqlite3")
    board = BoardService(store, repo)
    await board.import_cards()
    reviews = [{"commit": first, "decision": "reject", "report": "Tests missing."}]
    async with store.transaction() as db:
        await db.execute(
            "UPDATE cards SET phase = 'reviewing', commit_hash = ?, data = ? WHERE slug = 'report'",
            (last, json.dumps({"reviews": reviews})),
        )
    token = secrets.token_urlsafe(24)
    board_web = WebBoard(board, WebSettings("127.0.0.1", 0, token, "en"))
    await board_web.start()
    try:
        yield board_web, token, first, last
    finally:
        await board_web.stop()
        await store.close()


async def fetch(url: str, token: str) -> tuple[int, str, dict[str, str]]:
    async with aiohttp.ClientSession() as http:
        headers = {"Authorization": f"Bearer {token}"}
        async with http.get(url, headers=headers) as response:
            return response.status, await response.text(), dict(response.headers)


async def test_the_card_page_shows_each_file_of_the_change(changed) -> None:
    web, token, first, last = changed
    started = time.monotonic()
    status, page, _ = await fetch(f"{web.url}card/report", token)
    took = time.monotonic() - started
    assert status == 200
    section = page[page.index('<section id="change">') :]
    section = section[: section.index("</section>")]
    assert "8 files" in section and f"up to {last[:12]}" in section
    files = re.findall(r"<summary><code>([^<]+)</code>", section)
    assert sorted(files) == sorted(
        [
            "app.py",
            "new_name.txt",
            "gone.txt",
            "run.sh",
            "logo.png",
            "hostile.html",
            "latin1.txt",
            "huge.min.js",
        ]
    )
    assert "renamed from old_name.txt" in section
    assert "deleted" in section and "new file" in section
    assert "mode 100644 → 100755" in section
    assert "binary" in section
    # Highlighted on the server: a keyword and a comment have their classes.
    assert '<span class="k">def</span>' in section
    assert '<span class="c1"># say hello</span>' in section
    assert 'href="/card/report/patch"' in section
    print(
        f"\ncard page with a 10 MB line in its change: {len(page):,} bytes in {took * 1000:.0f} ms"
    )


async def test_hostile_lines_are_inert_and_bounded(changed) -> None:
    web, token, _, _ = changed
    _, page, _ = await fetch(f"{web.url}card/report", token)
    # The markup is text: every < of it escaped (the lexer's spans around its parts).
    assert "<script" not in page.lower().replace('<script src="/static/', "")
    assert "alert" in page and "&lt;" in page
    # Control and format characters are escapes a reader sees, not what they do.
    assert "\x1b" not in page and "\u202e" not in page and "\u200b" not in page
    assert "\\x1b" in page and "\\u202e" in page and "\\u200b" in page
    # Not UTF-8: replaced, shown.
    assert "caf\ufffd" in page
    # The 10 MB line is cut; the page stays small.
    assert len(page) < 300_000
    assert "more characters cut" in page


async def test_the_whole_patch_downloads_and_nothing_else_does(changed) -> None:
    web, token, first, last = changed
    status, patch, headers = await fetch(f"{web.url}card/report/patch", token)
    assert status == 200
    assert headers["Content-Disposition"] == 'attachment; filename="report.patch"'
    assert "diff --git a/app.py b/app.py" in patch and "x" * 10_000 in patch
    missing, said, _ = await fetch(f"{web.url}card/nosuch/patch", token)
    assert missing == 404 and "no commit" in said
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{web.url}card/report/patch") as response:
            assert response.status == 401  # no token, no patch


async def set_commit(web: WebBoard, commit: str) -> None:
    async with web.reads.store.transaction() as db:
        await db.execute("UPDATE cards SET commit_hash = ? WHERE slug = 'report'", (commit,))


def change_of(page: str) -> str:
    return page[page.index('<section id="change">') :].split("</section>", 1)[0]


async def test_a_commits_change_is_read_and_rendered_once(changed) -> None:
    """git and the highlighting run on a commit's first view only (change_cache.py); a
    new commit is a new entry, the cache keeps a bounded few, a failure none."""
    web, token, first, last = changed
    url = f"{web.url}card/report"
    _, page, _ = await fetch(url, token)
    assert web.changes.made == 1
    _, again, _ = await fetch(url, token)
    assert web.changes.made == 1 and change_of(again) == change_of(page)
    # The fixer's commit becomes the builder's: its own change, from its own parent.
    await set_commit(web, first)
    _, page_first, _ = await fetch(url, token)
    assert web.changes.made == 2 and f"up to {first[:12]}" in change_of(page_first)
    assert "huge.min.js" not in change_of(page_first)
    await set_commit(web, last)
    _, back, _ = await fetch(url, token)
    assert web.changes.made == 2 and change_of(back) == change_of(page)
    # Views at once wait for the one reading.
    web.changes = ChangeCache(web.texts, entries=1)
    pages = await asyncio.gather(*(fetch(url, token) for _ in range(4)))
    assert web.changes.made == 1 and {change_of(p) for _, p, _ in pages} == {change_of(page)}
    # One entry: the other commit pushes it out.
    await set_commit(web, first)
    await fetch(url, token)
    await set_commit(web, last)
    await fetch(url, token)
    assert web.changes.made == 3
    # Larger than all it may hold: shown, not kept.
    web.changes = ChangeCache(web.texts, chars=1_000)
    for _ in range(2):
        _, shown, _ = await fetch(url, token)
        assert change_of(shown) == change_of(page)
    assert web.changes.made == 2
    # A commit git does not know: said on the page, and tried again on the next view.
    await set_commit(web, "0" * 40)
    for _ in range(2):
        status, missing, _ = await fetch(url, token)
        assert status == 200 and "The change cannot be shown" in missing
    assert web.changes.made == 2


def test_only_a_token_the_stylesheet_colours_gets_a_span() -> None:
    """Names, operators and spaces look the same with a span or without: the browser
    builds a third of the elements of a large change."""
    assert {"k", "c1", "s1", "nf", "mi"} <= diff_section.STYLED
    [line] = diff_section.highlighted("a.py", ["def f(x): return x + 1  # one <b>"])
    assert '<span class="k">def</span>' in line and '<span class="nf">f</span>' in line
    assert '<span class="c1"># one &lt;b&gt;</span>' in line
    assert set(re.findall(r'class="([^"]+)"', line)) <= diff_section.STYLED
    assert unescape(re.sub("<[^>]+>", "", line)) == "def f(x): return x + 1  # one <b>"
