"""A signed-in owner's board page on a large board: what its inbox costs.

Builds the board of bench/web_board.py (--cards cards; 1% wait with a question, 1%
failed: 2,000 inbox items at 100,000 cards) and prints the time of `inbox()` (what
/inbox and the CLI read: every item), of `inbox_page()` (what the owner's board page
reads: the first items it shows and the count), and the server's answer to the board
page for a reader with the token and for a signed-in owner (whose page adds the
inbox), median, p90 and p99 over --requests requests.

    .venv/bin/python bench/owner_inbox.py [--cards 100000] [--requests 100]
        [--engine sqlite|postgresql] [--explain]

--engine postgresql starts a throwaway PostgreSQL (tests/realservers/postgres.py);
--explain prints the plan of the statement that reads the page's columns.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.web_board import build, ms, timed  # noqa: E402
from chatbot.board import BoardService  # noqa: E402
from chatbot.board import inbox as board_inbox  # noqa: E402
from chatbot.board.board_columns import columns_query  # noqa: E402
from chatbot.board.card_lists import read_params  # noqa: E402
from chatbot.store import Store  # noqa: E402
from chatbot.web import WebSettings  # noqa: E402
from chatbot.web.groups import SHOWN as COLUMN_SHOWN  # noqa: E402
from chatbot.web.groups import page_columns  # noqa: E402
from chatbot.web.inbox_section import SHOWN  # noqa: E402
from chatbot.web.server import WebBoard  # noqa: E402
from tests.realservers.postgres import DATABASE, Postgres  # noqa: E402


async def main(cards: int, requests: int, engine: str, explain: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="owner-inbox-") as folder:
        repo = Path(folder) / "repo"
        (repo / "docs" / "intent").mkdir(parents=True)
        server = None
        if engine == "postgresql":
            server = Postgres(durable=True).start()
            url = server.url(server.fresh_schema())
            store = await Store.open(url, password_file=server.password_file)
        else:
            store = await Store.open(Path(folder) / "board.sqlite3")
        try:
            await measure(store, repo, cards, requests, server, explain)
        finally:
            await store.close()
            if server is not None:
                server.stop()


async def measure(
    store: Store, repo: Path, cards: int, requests: int, server, explain: bool
) -> None:
    board = BoardService(store, repo)
    began = time.perf_counter()
    await build(store, cards)
    print(f"{cards} cards built in {time.perf_counter() - began:.1f} s ({store.engine})")
    if server is not None:
        server._psql("VACUUM ANALYZE", DATABASE)  # as autovacuum would have by now
    if explain:
        await explain_columns(store)
    times = []
    for _ in range(requests):
        began = time.perf_counter()
        items = await board_inbox.inbox(board)
        times.append((time.perf_counter() - began) * 1000)
    print(f"inbox(): {len(items)} items, {ms(times)}")
    if hasattr(board_inbox, "inbox_page"):
        times = []
        for _ in range(requests):
            began = time.perf_counter()
            page = await board_inbox.inbox_page(board, SHOWN)
            times.append((time.perf_counter() - began) * 1000)
        print(f"inbox_page({SHOWN}): {len(page.items)} of {page.count} items, {ms(times)}")
    token = secrets.token_urlsafe(24)
    web = WebBoard(board, WebSettings("127.0.0.1", 0, token, "en"), sessions=board.web_sessions)
    await web.start()
    try:
        link = (await board.web_sessions.issue("xmpp:owner@localhost")).token
        signed = await board.web_sessions.sign_in(link, "bench")
        who = {
            "reader (token)": {"Authorization": f"Bearer {token}"},
            "owner (session)": {"Cookie": f"board_owner={signed.cookie}"},
        }
        async with aiohttp.ClientSession(headers={"Accept-Encoding": "gzip"}) as session:
            for name, headers in who.items():
                times, body, status, _ = await timed(session, web.url, headers, requests)
                print(f"board page, {name}: {status}, {len(body):,} bytes gzip, {ms(times)}")
    finally:
        await web.stop()


async def explain_columns(store: Store) -> None:
    """The plan of the board page's one statement for its columns (board_columns.py)."""
    sql, params = columns_query(page_columns(COLUMN_SHOWN)), read_params()
    if store.engine == "postgresql":
        rows = await store.reader.fetchall("EXPLAIN (ANALYZE, COSTS OFF) " + sql, params)
        lines = [row[0] for row in rows]
    else:
        rows = await store.reader.fetchall("EXPLAIN QUERY PLAN " + sql, params)
        lines = [row[3] for row in rows]
    print("explain: the board page's columns")
    for line in lines:
        print(f"    {line}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--engine", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--explain", action="store_true")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.cards, arguments.requests, arguments.engine, arguments.explain))
