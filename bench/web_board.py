"""The web board on a large board: page weight, time to first paint, live latency, search.

Builds a board of --cards cards (most of them done, as on a board that has run for
a while; some waiting with a question, some running), serves it with the bot's
own WebBoard on 127.0.0.1, and measures:

- the board page's weight as sent (gzip, which every browser asks for) and raw,
  and the server's time to answer it (median, p90, p99 over --requests requests);
- in Debian's headless Chromium: first paint, first contentful paint, DOM ready
  and load, from the browser's own performance timeline (median of --loads loads);
- commit -> on screen: a card moved by the board service until the open page
  shows it in its new column (server-sent events, MutationObserver in the page),
  and until the card's own open page shows its new phase (median, p90, p99);
- /cards: a search for a word in every title, a slug, a text nothing holds, a
  group's first page and a page from the middle of the done group.

    .venv/bin/python bench/web_board.py [--cards 10000] [--loads 5] [--moves 20]
        [--requests 50] [--engine sqlite|postgresql] [--explain]

--engine postgresql starts a throwaway PostgreSQL (tests/realservers/postgres.py);
--explain prints the query plans of the search, a page of done and what changed.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import secrets
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chatbot.board import BoardService  # noqa: E402
from chatbot.board.card_lists import Cursor, list_query  # noqa: E402
from chatbot.board.web_reads import _CHANGED_SQL  # noqa: E402
from chatbot.domain.phases import Kind, Phase  # noqa: E402
from chatbot.domain.transitions import Action  # noqa: E402
from chatbot.store import Store  # noqa: E402
from chatbot.store import cards as card_store  # noqa: E402
from chatbot.store import questions as question_store  # noqa: E402
from chatbot.web import WebSettings  # noqa: E402
from chatbot.web.server import WebBoard  # noqa: E402
from tests.realservers.postgres import DATABASE, Postgres  # noqa: E402
from tests.web.browser import SEEN, WATCH_CARD, WATCH_LIVE, WATCH_TEXT, Browser  # noqa: E402

# Where the cards of a long-running board sit (the rest is done: deployed or archived).
SHARES = (
    (Phase.PLANNED, 0.06),
    (Phase.NEEDS_HUMAN, 0.01),
    (Phase.FAILED, 0.01),
    (Phase.READY_FOR_DEPLOYMENT, 0.02),
    (Phase.PLANNING_WITH_FEEDBACK, 0.01),
    (Phase.ARCHIVED, 0.09),
)
PAINT = """
const done = arguments[arguments.length - 1];
const read = () => {
  const nav = performance.getEntriesByType('navigation')[0];
  const paint = Object.fromEntries(performance.getEntriesByType('paint')
    .map(p => [p.name, p.startTime]));
  if (!nav || nav.loadEventEnd === 0 || !paint['first-contentful-paint']) {
    return requestAnimationFrame(read);
  }
  done({ttfb: nav.responseStart, response: nav.responseEnd, fp: paint['first-paint'],
        fcp: paint['first-contentful-paint'], dom: nav.domContentLoadedEventEnd,
        load: nav.loadEventEnd, bytes: nav.transferSize, body: nav.decodedBodySize,
        cards: document.querySelectorAll('li.card').length});
};
read();
"""


async def build(store: Store, count: int) -> None:
    """`count` cards with three events each; the ones waiting for an owner ask something."""
    phases: list[Phase] = []
    for phase, share in SHARES:
        phases += [phase] * int(count * share)
    phases += [Phase.DEPLOYED] * (count - len(phases))
    async with store.transaction() as db:
        for number, phase in enumerate(phases):
            slug = f"card-{number:05d}"
            card = await card_store.create(
                db,
                slug,
                Kind.INTENT,
                phase,
                actor="bench",
                reason="imported",
                title=f"Card {number}: make the {number % 97}th thing a little better",
                lane="light" if number % 3 else "heavy",
                source_path=f"docs/intent/{slug}.md",
            )
            await db.execute("UPDATE cards SET version = 3 WHERE id = ?", (card.id,))
            for seq in (2, 3):
                await db.execute(
                    "INSERT INTO events (card_id, seq, from_phase, to_phase, action, actor, "
                    "reason, at) VALUES (?, ?, ?, ?, 'bench', 'bench', 'history', ?)",
                    (card.id, seq, phase.value, phase.value, time.time() - 86400 * (number % 40)),
                )
            if phase is Phase.NEEDS_HUMAN:
                await question_store.ask(
                    db, card.id, "needs_human", "Light or heavy lane?", ["light", "heavy"]
                )


def ms(values: list[float]) -> str:
    line = f"median {statistics.median(values):7.1f} ms"
    if len(values) >= 10:
        cuts = statistics.quantiles(values, n=100, method="inclusive")
        line += f", p90 {cuts[89]:7.1f} ms, p99 {cuts[98]:7.1f} ms"
    return line + f", max {max(values):7.1f} ms"


async def timed(session: aiohttp.ClientSession, url: str, headers: dict, count: int):
    """`count` answers to one address: the times (ms), the last body as sent, its status."""
    times = []
    for _ in range(count):
        begin = time.perf_counter()
        async with session.get(url, headers=headers) as response:
            body = await response.read()
            status, encoding = response.status, response.headers.get("Content-Encoding")
        times.append((time.perf_counter() - begin) * 1000)
    return times, body, status, encoding


async def searches(store: Store, session, url: str, headers: dict, count: int) -> None:
    """/cards, if this version of the board has it."""
    half = (await store.reader.fetchone("SELECT count(*) FROM cards"))[0] // 2
    row = await store.reader.fetchone(
        "SELECT updated_at, id FROM cards WHERE phase = 'deployed' "
        "ORDER BY updated_at DESC, id DESC LIMIT 1 OFFSET ?",
        (half,),
    )
    for name, query in (
        ("a word in every title", "q=thing"),
        ("one slug", "q=card-04242"),
        ("a text nothing holds", "q=zz-nothing"),
        ("a word, done group", "q=better&group=done"),
        ("done, first page", "group=done"),
        ("done, a middle page", f"group=done&after={row[0]!r}_{row[1]}"),
    ):
        times, _, status, _ = await timed(session, f"{url}cards?{query}", headers, count)
        if status == 404:
            print("search: no /cards on this version")
            return
        print(f"search: {name:<22} {ms(times)}")


async def explain(store: Store, board: BoardService) -> None:
    """The plans of /cards' queries and of a live page's "what changed" on this engine."""
    done = (Phase.DEPLOYED, Phase.DONE, Phase.RESEARCH_DONE)
    row = await store.reader.fetchone("SELECT updated_at, id FROM cards WHERE id = 50000")
    middle = Cursor(row[0], row[1]) if row else None
    mark = await board.web.change_mark()
    for name, (sql, params) in (
        ("search, nothing holds it", list_query(store.engine, tuple(Phase), 50, "zz-nothing")),
        ("done, first page", list_query(store.engine, done, 50)),
        ("done, a middle page", list_query(store.engine, done, 50, "", middle)),
        ("what changed since a mark", (_CHANGED_SQL, asdict(mark))),
        ("counts", ("SELECT phase, count(*) FROM cards GROUP BY phase", {})),
    ):
        if store.engine == "postgresql":
            rows = await store.reader.fetchall("EXPLAIN (ANALYZE, COSTS OFF) " + sql, params)
            lines = [r[0] for r in rows]
        else:
            rows = await store.reader.fetchall("EXPLAIN QUERY PLAN " + sql, params)
            lines = [r[3] for r in rows]
        # Enough to see which index each walk takes: the distinct lines, once each.
        print(f"explain: {name}")
        for line in dict.fromkeys(lines):
            print(f"    {line}")


async def main(args: argparse.Namespace, folder: Path) -> None:
    server = None
    if args.engine == "postgresql":
        server = Postgres().start()
        store = await Store.open(
            server.url(server.fresh_schema()), password_file=server.password_file
        )
    else:
        store = await Store.open(folder / "board.sqlite3")
    board = BoardService(store, folder / "repo")
    started = time.perf_counter()
    await build(store, args.cards)
    print(
        f"board: {args.cards:,} cards built in {time.perf_counter() - started:.1f} s "
        f"({store.engine})"
    )
    if server is not None:
        # As autovacuum would have by now on a board that grew over months: the planner
        # knows the tables' sizes, and index-only scans can skip the rows.
        server._psql("VACUUM ANALYZE", DATABASE)
    if args.explain:
        await explain(store, board)
    token = secrets.token_urlsafe(24)
    web = WebBoard(board, WebSettings("127.0.0.1", 0, token))
    await web.start()
    store.on_commit.append(web.wake)
    browser = Browser()
    try:
        auth = {"Authorization": f"Bearer {token}"}
        gzip_headers = {**auth, "Accept-Encoding": "gzip"}
        async with aiohttp.ClientSession(auto_decompress=False) as session:
            served, sent, _, encoding = await timed(session, web.url, gzip_headers, args.requests)
            raw = gzip.decompress(sent) if encoding == "gzip" else sent
            print(
                f"page weight: {len(sent):,} bytes sent ({encoding or 'identity'}), "
                f"{len(raw):,} bytes of HTML ({len(raw) / args.cards:.0f} per card)"
            )
            statics = sum(len(body) for body in web.static.values())
            print(f"  plus {statics:,} bytes of script, stylesheet and icon (cached by version)")
            print(f"server: board page answered in {ms(served)} ({args.requests} requests)")
            await searches(store, session, web.url, gzip_headers, args.requests)

        await browser.open(f"{web.url}?token={token}")  # the cookie
        timings = []
        for _ in range(args.loads):
            await browser.open(web.url)
            timings.append(await browser.wait_js(PAINT))
        print(f"chromium: {timings[0]['cards']:,} cards on the page")
        for name, key in (
            ("first byte", "ttfb"),
            ("response end", "response"),
            ("first paint", "fp"),
            ("first contentful paint", "fcp"),
            ("DOM ready", "dom"),
            ("load", "load"),
        ):
            print(f"chromium: {name:<23} {ms([t[key] for t in timings])}")

        await browser.js(WATCH_LIVE)
        await browser.wait_js(SEEN)
        latencies = []
        for number in range(args.moves):
            slug = f"card-{number:05d}"  # planned cards: /start moves them to "working"
            await browser.js(WATCH_CARD, slug, "working")
            await board.act(slug, Action.START, actor="bench")
            committed = time.time()
            latencies.append((await browser.wait_js(SEEN) / 1000 - committed) * 1000)
        print(f"live: commit -> on screen over {args.moves} moves: {ms(latencies)}")

        # A card's own page: the move lands in its facts and history.
        latencies = []
        for number in range(args.moves, 2 * args.moves):
            slug = f"card-{number:05d}"
            await browser.open(f"{web.url}card/{slug}")
            await browser.js(WATCH_LIVE)
            await browser.wait_js(SEEN)
            await browser.js(WATCH_TEXT, "operator running")
            await board.act(slug, Action.START, actor="bench")
            committed = time.time()
            latencies.append((await browser.wait_js(SEEN) / 1000 - committed) * 1000)
        print(f"live: commit -> on a card's page over {args.moves} moves: {ms(latencies)}")
    finally:
        browser.close()
        await web.stop()
        await store.close()
        if server is not None:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--engine", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--explain", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-web-") as folder:
        asyncio.run(main(args, Path(folder)))
