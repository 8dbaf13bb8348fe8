"""A card's page with a large change: the server's answer and Chromium's DOM ready.

Builds a git repository whose card commit changes about --lines lines over several
files (Python, JavaScript, CSS, Markdown, a new file and a deleted one), a board of
--cards cards around the card, serves it with the bot's own WebBoard on 127.0.0.1,
and measures:

- the server's answer to /card/<slug>: the first view (git diff and highlighting,
  nothing cached yet) and then median, p90 and p99 over --requests views;
- in Debian's headless Chromium (tests/web/browser.py): first byte, response end, DOM
  ready and load of the card page, from the browser's own timeline (--loads loads).

    .venv/bin/python bench/card_diff.py [--lines 5000] [--requests 100] [--loads 10]
        [--cards 1000] [--engine sqlite|postgresql]

--engine postgresql starts a throwaway PostgreSQL (tests/realservers/postgres.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.web_board import build, ms, timed  # noqa: E402
from chatbot.board import BoardService  # noqa: E402
from chatbot.store import Store  # noqa: E402
from chatbot.web import WebSettings  # noqa: E402
from chatbot.web.server import WebBoard  # noqa: E402
from tests.realservers.postgres import DATABASE, Postgres  # noqa: E402
from tests.web.browser import Browser  # noqa: E402

SLUG = "big-change"
NAVIGATION = """
const done = arguments[arguments.length - 1];
const read = () => {
  const nav = performance.getEntriesByType('navigation')[0];
  if (!nav || nav.loadEventEnd === 0) return requestAnimationFrame(read);
  done({ttfb: nav.responseStart, response: nav.responseEnd,
        dom: nav.domContentLoadedEventEnd, load: nav.loadEventEnd,
        bytes: nav.decodedBodySize, rows: document.querySelectorAll('table.diff tr').length});
};
read();
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def python_file(number: int, lines: int, version: int) -> str:
    out = [f'"""Module {number}, version {version}."""', "", "import os", ""]
    while len(out) < lines:
        n = len(out)
        out += [
            f"def step_{n}(value: int, name: str = 'item {n}') -> int:",
            f"    # step {n}: add what version {version} adds",
            f"    total = value + {n * version} if os.sep else {n}",
            f'    return total * 2  # "step {n}"',
            "",
        ]
    return "\n".join(out[:lines]) + "\n"


def script_file(lines: int, version: int) -> str:
    out = []
    while len(out) < lines:
        n = len(out)
        out += [
            f"function render{n}(items) {{",
            f"  const shown = items.filter(i => i.version >= {version}).slice(0, {n % 50});",
            f"  return shown.map(i => `<li>${{i.name}} ({n})</li>`).join('');",
            "}",
        ]
    return "\n".join(out[:lines]) + "\n"


def style_file(lines: int, version: int) -> str:
    out = []
    while len(out) < lines:
        n = len(out)
        out += [f".card-{n} {{", f"  margin: {version}px {n % 9}px;", "  color: #333;", "}"]
    return "\n".join(out[:lines]) + "\n"


def markdown_file(lines: int, version: int) -> str:
    return "".join(f"- point {n} of the plan, as version {version} says it\n" for n in range(lines))


def make_repo(repo: Path, lines: int) -> str:
    """The repository with its card's intent, and the card's commit: about `lines` patch
    lines over several files. Returns the commit's hash."""
    (repo / "docs" / "intent").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "docs" / "intent" / f"{SLUG}.md").write_text("# A big change\n\nRewrite it all.\n")
    # Every line of a rewritten file is a - and a + line of the patch.
    share = max(lines // 5, 20)
    files = {f"app/module_{n}.py": (python_file, share // 2) for n in range(5)}
    files["web/board.js"] = (script_file, share // 2)
    files["web/board.css"] = (style_file, share // 2)
    files["docs/plan.md"] = (markdown_file, share // 2)
    for path, (make, count) in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        text = make(count, 1) if make is not python_file else make(int(path[-4]), count, 1)
        (repo / path).write_text(text)
    (repo / "app" / "old.py").write_text(python_file(9, share // 2, 1))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    for path, (make, count) in files.items():
        text = make(count, 2) if make is not python_file else make(int(path[-4]), count, 2)
        (repo / path).write_text(text)
    (repo / "app" / "old.py").unlink()
    (repo / "app" / "new.py").write_text(python_file(10, share, 2))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the card's change")
    return git(repo, "rev-parse", "HEAD")


async def main(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bench-diff-"))
    repo = folder / "repo"
    commit = make_repo(repo, args.lines)
    stat = git(repo, "diff", "--shortstat", f"{commit}^", commit)
    patch = git(repo, "diff", f"{commit}^", commit)
    print(f"change: {stat.strip()}; {len(patch.splitlines()):,} patch lines")
    server = None
    if args.engine == "postgresql":
        server = Postgres(durable=True).start()
        store = await Store.open(
            server.url(server.fresh_schema()), password_file=server.password_file
        )
    else:
        store = await Store.open(folder / "board.sqlite3")
    browser = None
    web = None
    try:
        board = BoardService(store, repo)
        await build(store, args.cards)
        await board.import_cards()
        async with store.transaction() as db:
            await db.execute(
                "UPDATE cards SET phase = 'reviewing', commit_hash = ?, data = ? WHERE slug = ?",
                (commit, json.dumps({}), SLUG),
            )
        if server is not None:
            server._psql("VACUUM ANALYZE", DATABASE)
        print(f"board: {args.cards:,} cards and the card ({store.engine})")
        token = secrets.token_urlsafe(24)
        web = WebBoard(board, WebSettings("127.0.0.1", 0, token, "en"))
        await web.start()
        url = f"{web.url}card/{SLUG}"
        headers = {"Authorization": f"Bearer {token}", "Accept-Encoding": "gzip"}
        async with aiohttp.ClientSession() as session:
            first, body, status, _ = await timed(session, url, headers, 1)
            assert status == 200, status
            print(f"server: first view {first[0]:7.1f} ms, {len(body):,} bytes of HTML")
            times, _, _, _ = await timed(session, url, headers, args.requests)
            print(f"server: card page answered in {ms(times)} ({args.requests} requests)")
        browser = Browser()
        await browser.open(f"{web.url}?token={token}")  # the cookie
        timings = []
        for _ in range(args.loads):
            await browser.open(url)
            timings.append(await browser.wait_js(NAVIGATION))
        print(f"chromium: {timings[0]['rows']:,} diff rows, {timings[0]['bytes']:,} bytes")
        for name, key in (
            ("first byte", "ttfb"),
            ("response end", "response"),
            ("DOM ready", "dom"),
            ("load", "load"),
        ):
            print(f"chromium: {name:<13} {ms([t[key] for t in timings])}")
    finally:
        if browser is not None:
            browser.close()
        if web is not None:
            await web.stop()
        await store.close()
        if server is not None:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5_000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--cards", type=int, default=1_000)
    parser.add_argument("--engine", choices=("sqlite", "postgresql"), default="sqlite")
    asyncio.run(main(parser.parse_args()))
