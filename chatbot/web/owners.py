"""Owners on the web board: signing in with a link from /web, and acting from a card.

The link's GET only shows a page with a button: chat apps fetch links to preview
them, and a preview must not use up the link. The button's POST uses it and sets the
session cookie (HttpOnly, SameSite=Strict, Secure when the browser came over TLS).

An action is a POST of a plain form. It is refused with 403, and nothing runs, unless
it comes with a live owner session (the board's token only reads), that session's own
CSRF token, and from the board's own origin (Origin, or Sec-Fetch-Site where a
browser sends no Origin). Then the action runs as chat would run the command
(chat/web_acts.py, handed in by the app) and the browser goes back to the card, which
shows what was answered.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from chatbot.board import StoreUnwritable
from chatbot.board.web_sessions import (
    SESSION_VALID_S,
    LinkRefused,
    Said,
    WebSession,
    WebSessions,
)
from chatbot.web.auth import OWNER_COOKIE, SESSION, SESSION_ENDED, Guard
from chatbot.web.board_acts import BACK
from chatbot.web.markup import Safe, tag
from chatbot.web.texts import Texts

log = logging.getLogger(__name__)

# identity, card slug, action, the form's fields -> what was said (chat/web_acts.py).
Acting = Callable[[str, str, str, Mapping[str, str]], Awaitable[list[Said]]]

# How long what an action answered stays on its card's page (a live re-read of the
# page must not wipe it a moment after the redirect showed it).
SAID_FOR_S = 120.0
SAID_KEPT = 1000
FIELDS = (
    "action",
    "text",
    "option",
    "question",
    "request",
    "path",
    "start",
    "end",
    "commit",
    "checks",
)
REQUEST_ACTIONS = ("accept", "decline")
MAX_FIELD_CHARS = 20_000
# Where what a form from the board page answered is kept (no card's slug is empty).
ON_BOARD = ""


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class Owners:
    def __init__(
        self,
        sessions: WebSessions | None,
        acting: Acting | None,
        guard: Guard,
        texts: Texts,
        public_url: str | None = None,
    ):
        self.sessions = sessions
        self.acting = acting
        self.guard = guard
        self.texts = texts
        self.public_origin = origin_of(public_url) if public_url else None
        self._said: OrderedDict[tuple[int, str], tuple[float, list[Said]]] = OrderedDict()

    # --- signing in ------------------------------------------------------------------

    def _bare(self, body: Safe, status: int = 200) -> web.Response:
        """A page that loads no script: before sign-in only the board's stylesheet, which
        anyone may load (auth.OPEN_PATHS)."""
        html = tag(
            '<!doctype html>\n<html lang="{lang}"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<link rel="stylesheet" href="/static/board.css">'
            '<title>{title}</title></head><body><main class="bare">{body}'
            '<p><a href="/">{back}</a></p></main></body></html>\n',
            lang=self.texts.locale,
            title=self.texts("signin_title"),
            body=body,
            back=self.texts("back"),
        )
        return web.Response(text=html, status=status, content_type="text/html")

    def _message(self, key: str, status: int) -> web.Response:
        return self._bare(tag('<p id="message">{m}</p>', m=self.texts(key)), status)

    def _refused_link(self, refused: LinkRefused) -> web.Response:
        return self._message(f"signin_{refused.why}", 404 if refused.why == "unknown" else 410)

    async def show(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        if self.sessions is None:
            return self._refused_link(LinkRefused("unknown"))
        try:
            found = await self.sessions.link(token)
        except LinkRefused as refused:
            return self._refused_link(refused)
        main = tag(
            '<section id="signin"><p>{ask}</p><form method="post" action="/signin">'
            '<input type="hidden" name="token" value="{token}">'
            '<button type="submit">{button}</button></form></section>',
            ask=self.texts("signin_ask", identity=found.identity),
            token=token,
            button=self.texts("signin_button"),
        )
        return self._bare(main)

    async def use(self, request: web.Request) -> web.Response:
        if not self.same_origin(request):
            return self._message("forbidden_origin", 403)
        form = await request.post()
        token = str(form.get("token", ""))
        if self.sessions is None or not token:
            return self._refused_link(LinkRefused("unknown"))
        try:
            signed = await self.sessions.sign_in(token, request.headers.get("User-Agent", ""))
        except LinkRefused as refused:
            return self._refused_link(refused)
        except StoreUnwritable as error:
            # A full disk: the link stays unused; it works once the board saves again.
            log.warning("web: a sign-in was not saved: %s", error)
            return self._message("signin_unsaved", 503)
        log.info("web: %s signed in (session #%d)", signed.session.identity, signed.session.id)
        response = web.Response(status=303, headers={"Location": "/"})
        response.set_cookie(
            OWNER_COOKIE,
            signed.cookie,
            max_age=int(SESSION_VALID_S),
            path="/",
            httponly=True,
            samesite="Strict",
            secure=self.guard.over_tls(request),
        )
        return response

    # --- acting ----------------------------------------------------------------------

    def same_origin(self, request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        site = request.headers.get("Sec-Fetch-Site")
        if origin is not None and origin != "null":
            scheme = "https" if self.guard.over_tls(request) else "http"
            own = {f"{scheme}://{request.host}".lower(), self.public_origin}
            return origin.rstrip("/").lower() in own
        if origin == "null":
            # Our Referrer-Policy (no-referrer) makes browsers send "null" even for our
            # own forms; then only their Sec-Fetch-Site tells where the form was.
            return site == "same-origin"
        # No Origin: not a browser's form (a script with the session's token), or an
        # old browser; a browser that says where the request came from is believed.
        return site in (None, "same-origin")

    async def _checked(
        self, request: web.Request
    ) -> tuple[WebSession, Mapping[str, Any]] | web.Response:
        """The session and the form of an owner's POST, or the 403 that refuses it."""
        session: WebSession | None = request.get(SESSION)
        if session is None:
            key = "session_ended" if request.get(SESSION_ENDED) else "forbidden_read_only"
            return self._message(key, 403)
        if not self.same_origin(request):
            return self._message("forbidden_origin", 403)
        form = await request.post()
        csrf = str(form.get("csrf", ""))
        if not hmac.compare_digest(csrf.encode(), session.csrf.encode()):
            return self._message("forbidden_csrf", 403)
        return session, form

    async def act(self, request: web.Request) -> web.Response:
        slug = request.match_info["slug"]
        checked = await self._checked(request)
        if isinstance(checked, web.Response):
            return checked
        session, form = checked
        fields = {k: str(form.get(k, ""))[:MAX_FIELD_CHARS] for k in FIELDS}
        # A board button sends one name and value (the action); its option or the
        # owner's choice past the checks comes in the address (board_acts.py).
        for name in ("option", "question", "checks"):
            if not fields[name]:
                fields[name] = request.query.get(name, "")[:MAX_FIELD_CHARS]
        back = BACK.get(str(form.get("back", "")))
        if self.acting is None:
            said: list[Said] = [(self.texts("forbidden_read_only"), True)]
        else:
            said = await self.acting(session.identity, slug, fields["action"], fields)
        self._keep(session.id, slug if back is None else ON_BOARD, said)
        return web.Response(status=303, headers={"Location": back or f"/card/{slug}#act"})

    async def decide(self, request: web.Request) -> web.Response:
        """Accept or decline a requester's request from the board's inbox: a request
        need not have a card (/draft), so it has its own address. It runs as /accept N
        or /decline N in chat, and leads back to the board."""
        checked = await self._checked(request)
        if isinstance(checked, web.Response):
            return checked
        session, form = checked
        action = str(form.get("action", ""))
        fields = {"action": action, "request": request.match_info["request"]}
        if self.acting is None:
            said: list[Said] = [(self.texts("forbidden_read_only"), True)]
        elif action not in REQUEST_ACTIONS:
            said = [(self.texts("request_actions_only"), True)]
        else:
            said = await self.acting(session.identity, "", action, fields)
        self._keep(session.id, ON_BOARD, said)
        return web.Response(status=303, headers={"Location": "/"})

    async def draft(self, request: web.Request) -> web.Response:
        """A new card from the board page's "New card" form: /draft <text> in chat, whose
        planner asks what it needs to know. It leads back to the board, which shows
        what was answered."""
        checked = await self._checked(request)
        if isinstance(checked, web.Response):
            return checked
        session, form = checked
        fields = {"action": "draft", "text": str(form.get("text", ""))[:MAX_FIELD_CHARS]}
        if self.acting is None:
            said: list[Said] = [(self.texts("forbidden_read_only"), True)]
        else:
            said = await self.acting(session.identity, "", "draft", fields)
        self._keep(session.id, ON_BOARD, said)
        return web.Response(status=303, headers={"Location": "/"})

    def _keep(self, session_id: int, where: str, said: list[Said]) -> None:
        key = (session_id, where)
        self._said.pop(key, None)
        self._said[key] = (time.monotonic(), said)
        while len(self._said) > SAID_KEPT:
            self._said.popitem(last=False)

    def said(self, session_id: int, where: str) -> list[Said]:
        """What the session's last action on a card's page (its slug), or on the board
        (ON_BOARD), answered."""
        kept = self._said.get((session_id, where))
        if kept is None or time.monotonic() - kept[0] > SAID_FOR_S:
            return []
        return kept[1]
