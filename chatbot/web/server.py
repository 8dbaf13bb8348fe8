"""The web board: an aiohttp server inside the bot.

Every page and the event stream need the token or an owner's session (auth.Guard);
`/healthz` does not and tells monitoring only the bot's state, no card data. The
token only reads: the pages are GET (and HEAD), and the board is reached through its
read API. The one way to change anything is a signed-in owner's form (owners.py),
which runs as the chat command would.
A strict Content-Security-Policy allows our own stylesheet and script and nothing
else: no inline script or style, nothing from another host. Connections pass a gate
(connections.py) that keeps the board's descriptors to a share of the process's.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import web

from chatbot.board import Card, RunRecord, SpendReport, UnknownCard
from chatbot.board import inbox as board_inbox
from chatbot.board.hand_over import HandOver, hand_over
from chatbot.board.ports import WebSide
from chatbot.board.web_sessions import WebSessions
from chatbot.web import (
    board_acts,
    card_page,
    cards_page,
    live,
    owners,
    pages,
    routines_page,
    spend_pages,
)
from chatbot.web.action_forms import Owner
from chatbot.web.auth import SESSION, SESSION_ENDED, Guard
from chatbot.web.card_page import MAX_TEXT, CardPage, RepoText
from chatbot.web.cards_page import PER_PAGE, BadQuery
from chatbot.web.change_cache import ChangeCache
from chatbot.web.connections import AcceptFailures, Connection, Gate, GuardedSite
from chatbot.web.groups import SHOWN, all_columns, column
from chatbot.web.health import health_body
from chatbot.web.inbox_section import SHOWN as INBOX_SHOWN
from chatbot.web.inbox_section import inbox_section
from chatbot.web.markup import Safe, tag
from chatbot.web.metrics_http import MetricsDoor
from chatbot.web.settings import WebSettings
from chatbot.web.texts import Texts
from runners.commit_view import CommitViewError

log = logging.getLogger(__name__)

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
SLUG = r"{slug:[a-z0-9][a-z0-9-]{0,60}}"
KEEPALIVE_S = 20.0
# How long stopping waits for open requests; the event streams end at once.
SHUTDOWN_S = 2.0
STATIC_TYPES = {
    "board.js": "text/javascript",
    "times.js": "text/javascript",
    "board.css": "text/css",
    "icon.svg": "image/svg+xml",
}

TransportsUp = Callable[[], dict[str, bool]]
# The board's spend report (BoardBudget.spend_report), as chat's /budget reads it.
Spending = Callable[[], Awaitable[SpendReport]]


def _static() -> dict[str, bytes]:
    folder = resources.files("chatbot.web") / "static"
    return {name: (folder / name).read_bytes() for name in STATIC_TYPES}


class WebBoard:
    def __init__(
        self,
        board: WebSide,
        settings: WebSettings,
        *,
        transports_up: TransportsUp = dict,
        metrics: MetricsDoor | None = None,
        sessions: WebSessions | None = None,
        acting: owners.Acting | None = None,
        spend: Spending | None = None,
    ):
        self.spend = spend
        # What it reads (board/ports.py WebSide); `board` is its page's handler.
        self.source = board
        self.reads = board.reads
        self.web = board.web
        self.settings = settings
        self.texts = Texts(settings.locale)
        self.transports_up = transports_up
        self.items = pages.CardItems(self.texts)
        self.changes = ChangeCache(self.texts)
        # Every page's events carry a waiting card's buttons; a reader's page hides them.
        self.live = live.Live(
            board.reads,
            board.web,
            lambda card: self.items(card, acts=True),
            lambda requests: pages.requests_line(requests, self.texts),
        )
        self.static = _static()
        digest = hashlib.sha256(b"".join(self.static.values())).hexdigest()
        self.static_version = digest[:12]
        self.guard = Guard(
            settings.token,
            self._unauthorized,
            settings.trusted_proxies,
            session_of=sessions.session if sessions is not None else None,
        )
        self.owners = owners.Owners(sessions, acting, self.guard, self.texts, settings.public_url)
        self.caps = settings.caps()
        self.gate = Gate(self.caps, self.texts("busy"))
        self._accept_failures = AcceptFailures(self.gate.reports)
        # /metrics answers to its own token (or the board's) before the board's sign-in.
        door = [metrics.middleware] if metrics is not None else []
        self.app = web.Application(middlewares=[self.gate.middleware, *door, self.guard.middleware])
        self.app.on_response_prepare.append(self._headers)
        self.app.add_routes(
            [
                web.get("/", self.board),
                web.get(f"/card/{SLUG}", self.card),
                web.get(f"/card/{SLUG}/patch", self.patch),
                web.get("/cards", self.cards),
                web.get("/runs", self.runs),
                web.get("/budget", self.budget),
                web.get("/routines", self.routines),
                web.get("/pipeline/{pipeline:[a-z0-9][a-z0-9-]{0,63}}", self.pipeline),
                web.get("/events", self.events),
                web.get("/healthz", self.health),
                web.get("/static/{name}", self.static_file),
                web.get("/favicon.ico", self.no_icon),
                web.get("/signin/{token}", self.owners.show),
                web.post("/signin", self.owners.use),
                web.post(f"/card/{SLUG}/act", self.owners.act),
                web.post("/request/{request:[0-9]{1,18}}/act", self.owners.decide),
                web.post("/draft", self.owners.draft),
            ]
        )
        self._runner: web.AppRunner | None = None
        self._stop = asyncio.Event()
        self._live_task: asyncio.Task[None] | None = None
        self.port = settings.port

    # --- running ------------------------------------------------------------------

    def wake(self) -> None:
        """For `Store.on_commit`: something was committed; open pages may need it."""
        self.live.wake()

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app, shutdown_timeout=SHUTDOWN_S)
        await self._runner.setup()
        site = GuardedSite(
            self._runner,
            self.settings.host,
            self.settings.port,
            self.gate,
            # No access log: a first visit's address carries the token.
            access_log=None,
            # aiohttp's keep-alive timer runs from the connection's start: a request head
            # must be complete by then, as must the next one on a kept-alive connection.
            keepalive_timeout=self.settings.header_timeout_s,
        )
        try:
            await site.start()
        except BaseException:
            await self._runner.cleanup()
            self._runner = None
            raise
        logging.getLogger("asyncio").addFilter(self._accept_failures)
        self.port = self._runner.addresses[0][1]
        self._stop.clear()
        self._live_task = asyncio.create_task(self.live.run(self._stop))

    @property
    def url(self) -> str:
        return WebSettings(self.settings.host, self.port, "").url

    async def stop(self) -> None:
        self._stop.set()
        if self._live_task is not None:
            await self._live_task
            self._live_task = None
        self.live.close()  # event streams end now, so shutdown does not wait on them
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        logging.getLogger("asyncio").removeFilter(self._accept_failures)

    # --- responses ----------------------------------------------------------------

    async def _headers(self, request: web.Request, response: web.StreamResponse) -> None:
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
        response.headers.setdefault("Cache-Control", "no-store")

    def _html(self, body: str, *, status: int = 200) -> web.Response:
        response = web.Response(text=body, status=status, content_type="text/html")
        response.enable_compression()
        return response

    def _page(
        self, title: str, main: str, view: str, *, status: int = 200, **frame: Any
    ) -> web.Response:
        """A whole page; `frame` is pages.frame's: mark, slug, owner_bar."""
        html = pages.frame(
            self.texts,
            title=title,
            # Every caller hands a Safe (built markup); the signature says str.
            main=main,  # type: ignore[arg-type]
            view=view,
            static_version=self.static_version,
            **frame,
        )
        return self._html(html, status=status)

    def _unauthorized(self, request: web.Request) -> web.Response:
        text = self.texts("session_ended" if request.get(SESSION_ENDED) else "unauthorized")
        refresh = ""
        if (
            request.method == "GET"  # a form another site posted is not asked again
            and request.headers.get("Sec-Fetch-Site") == "cross-site"
            and request.headers.get("Sec-Fetch-Mode") == "navigate"
        ):
            # A SameSite=Strict cookie stays home on a link from a chat app; the same
            # address opened again from here is same-site and carries it.
            refresh = '<meta http-equiv="refresh" content="0">'
        body = tag(
            '<!doctype html>\n<html lang="{lang}"><head><meta charset="utf-8">{refresh}'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<link rel="stylesheet" href="/static/board.css">'
            '<title>401</title></head><body><main class="bare"><h1>401</h1><p>{text}</p>'
            "</main></body></html>\n",
            lang=self.texts.locale,
            refresh=Safe(refresh),
            text=text,
        )
        response = web.Response(text=body, status=401, content_type="text/html")
        response.headers["WWW-Authenticate"] = 'Bearer realm="intent-board"'
        return response

    # --- routes -------------------------------------------------------------------

    async def board(self, request: web.Request) -> web.Response:
        mark = await self.web.change_mark()  # before the cards: a change between is re-sent
        counted = await self.live.counted(mark)
        # Every column in one statement (groups.all_columns): PostgreSQL pays per statement.
        listed = await all_columns(self.web, SHOWN)
        columns = {group: listing.cards for group, listing in listed.items()}
        requests = len(await self.reads.pending_requests())
        session = request.get(SESSION)
        said = self.owners.said(session.id, owners.ON_BOARD) if session else []
        inbox = board_acts.NOTHING
        if session is not None:
            # Only an owner's page reads it: a reader's page never carries the inbox.
            # Only what it shows, and the count: 50 of 2,000 items, not all of them.
            page = await board_inbox.inbox_page(self.source, INBOX_SHOWN)
            inbox = inbox_section(page.items, self.texts, count=page.count)
        bar = board_acts.owner_bar(session, said, self.texts, inbox)
        main = pages.board_main(
            columns,
            counted.groups,
            self.items,
            acts=bar is not None,
            total=counted.cards,
            requests=requests,
        )
        if bar is None:
            # A reader with the token: how an owner gets the page that acts.
            main = Safe(tag('<p class="hint" id="readers">{m}</p>', m=self.texts("readers")) + main)
        return self._page(self.texts("title"), main, "board", mark=mark.token(), owner_bar=bar)

    async def cards(self, request: web.Request) -> web.Response:
        """A page of cards, searched by slug and title (cards_page.py)."""
        try:
            query = cards_page.parse(dict(request.query), self.texts)
        except BadQuery as error:
            main = pages.message_main(str(error), self.texts)
            return self._page(self.texts("cards_title"), main, "cards", status=400)
        group = query.group
        listing = await column(
            self.web, group, PER_PAGE, text=query.text, after=query.after, before=query.before
        )
        count = None
        if group is not None and not query.text:
            count = (await self.live.counts(await self.web.change_mark()))[group]
        main = cards_page.cards_main(query, listing, count, self.items)
        return self._page(self.texts("cards_title"), main, "cards")

    async def card(self, request: web.Request) -> web.Response:
        slug = request.match_info["slug"]
        mark = await self.web.change_mark()
        try:
            view = await self.reads.view(slug)
        except UnknownCard:
            main = pages.message_main(self.texts("unknown_card", slug=slug), self.texts)
            return self._page(slug, main, "card", status=404)
        card = view.card
        runs = await self.web.card_runs(card.id)
        intent = await self._repo_text(card.source_path or f"docs/intent/{slug}.md")
        report_file = None
        if card.review_report_path and not card.data.reviews:
            report_file = await self._repo_text(card.review_report_path)
        research = None
        research_path = card.data.research_report
        if research_path:
            research = await self._repo_text(research_path)
        try:
            # Read and highlighted once per commit (change_cache.py), not on every view.
            change, change_problem = await self.changes.shown(self.reads, card), None
        except CommitViewError as error:
            change, change_problem = None, str(error)
        page = CardPage(
            view=view,
            runs=runs,
            intent=intent,
            change=change.change if change else None,
            change_html=change.html if change else None,
            change_problem=change_problem,
            comments=await self.source.comments.of_card(card),
            picked=_picked(request.query.get("line", "")),
            research=research,
            reviews=card_page.reviews_of(card.data.reviews, report_file),
            talk=await self.web.talk_of(card.id),
            hand_over=self._hand_over(card, runs),
            # A read like the others (it also reads the day's budget).
            why=await board_inbox.why(self.source, slug),
            owner=await self._owner(request, slug),
            session_ended=bool(request.get(SESSION_ENDED)),
            split=await self.web.split_progress(card.id) if view.children else None,
        )
        main = card_page.card_main(page, self.texts)
        return self._page(f"{card.slug}: {card.title}", main, "card", mark=mark.token(), slug=slug)

    async def patch(self, request: web.Request) -> web.Response:
        """The card's whole change as one patch file, for a download (bounded)."""
        slug = request.match_info["slug"]
        try:
            found = await self.reads.patch(await self.reads.card(slug))
        except (UnknownCard, CommitViewError):
            found = None
        if found is None:
            raise web.HTTPNotFound(text=self.texts("no_patch", slug=slug))
        text, _cut = found
        disposition = f'attachment; filename="{slug}.patch"'
        return web.Response(
            text=text,
            content_type="text/x-diff",
            headers={"Content-Disposition": disposition},
        )

    async def _owner(self, request: web.Request, slug: str) -> Owner | None:
        session = request.get(SESSION)
        if session is None:
            return None
        requests = [r for r in await self.reads.pending_requests() if r.argument == slug]
        said = self.owners.said(session.id, slug)
        return Owner(session.identity, session.csrf, said, requests)

    def _hand_over(self, card: Card, runs: list[RunRecord]) -> HandOver | None:
        workspaces = self.settings.workspaces
        if workspaces is None:
            return None
        return hand_over(card, runs, workspaces, self.settings.runtimes)

    async def _repo_text(self, path: str) -> RepoText:
        found = await asyncio.to_thread(self.web.repo_text, path, MAX_TEXT)
        if found is None:
            return RepoText(path, None)
        return RepoText(path, found[0], found[1])

    async def runs(self, request: web.Request) -> web.Response:
        mark = await self.web.change_mark()
        jobs = await self.web.job_lines()
        days = await self.web.runs_per_day(pages.CHART_DAYS)
        now = time.time()
        workers = await self.web.workers_seen(now - pages.WORKERS_SEEN_S)
        main = pages.runs_main(jobs, days, self.texts, now, workers)
        return self._page(self.texts("jobs"), main, "runs", mark=mark.token())

    async def budget(self, request: web.Request) -> web.Response:
        if self.spend is None:
            main = pages.message_main(self.texts("not_found"), self.texts)
            return self._page("404", main, "board", status=404)
        mark = await self.web.change_mark()
        main = spend_pages.budget_main(await self.spend(), self.texts)
        return self._page(self.texts("budget"), main, "runs", mark=mark.token())

    async def routines(self, request: web.Request) -> web.Response:
        """The routines and their next runs (routines_page.py)."""
        mark = await self.web.change_mark()
        main = await routines_page.page(self.source.routines, self.texts)
        return self._page(routines_page.title(self.texts), main, "runs", mark=mark.token())

    async def pipeline(self, request: web.Request) -> web.Response:
        mark = await self.web.change_mark()
        pipeline, runs = await self.reads.pipeline_runs(request.match_info["pipeline"])
        views = []
        for slug in await self.reads.pipeline_slugs(pipeline):
            try:
                views.append(await self.reads.view(slug))
            except UnknownCard:
                continue  # deleted between the two reads
        main = spend_pages.pipeline_main(pipeline, runs, views, self.texts)
        status = 200 if runs or views else 404
        return self._page(pipeline, main, "runs", mark=mark.token(), status=status)

    async def events(self, request: web.Request) -> web.StreamResponse:
        if self.live.clients >= self.caps.streams:
            # Live pages hold their connection for good: the rest stays for page loads.
            # board.js tries again with back-off.
            return web.Response(
                status=503, text=self.texts("busy_pages"), headers={"Retry-After": "30"}
            )
        since = request.headers.get("Last-Event-ID") or request.query.get("since")
        client = self.live.join(request.query.get("view", "board"), since)
        connection = request.protocol
        if isinstance(connection, Connection):
            # A closed page leaves at once, not at the next keep-alive write.
            connection.on_lost(lambda: self.live.drop(client))
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
        )
        try:
            await response.prepare(request)
            await live.stream(self.live, client, response.write, KEEPALIVE_S)
        finally:
            self.live.leave(client)
        return response

    async def health(self, request: web.Request) -> web.Response:
        queue = await self.web.queue_health()
        body = health_body(
            self.transports_up(), queue, self.reads.store_health, self.live.clients, time.time()
        )
        return web.Response(
            text=json.dumps(body),
            status=200 if body["ok"] else 503,
            content_type="application/json",
        )

    async def no_icon(self, request: web.Request) -> web.Response:
        return web.Response(status=204)

    async def static_file(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in self.static:
            main = pages.message_main(self.texts("not_found"), self.texts)
            return self._page("404", main, "board", status=404)
        response = web.Response(body=self.static[name], content_type=STATIC_TYPES[name])
        if request.query.get("v") == self.static_version:
            # The address changes with the content, so the browser may keep it.
            response.headers["Cache-Control"] = "private, max-age=31536000, immutable"
        response.enable_compression()
        return response


def _picked(value: str) -> tuple[int, int] | None:
    """`?line=<file number>:<line>`: the line an owner picked to comment on."""
    file, _, line = value.partition(":")
    if file.isdigit() and line.isdigit() and len(value) < 20:
        return int(file), int(line)
    return None
