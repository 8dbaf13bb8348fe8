"""Who may read the board: its token (from a file, as a Bearer header or a cookie), or
an owner's session from a /web sign-in link (owners.py; only a session may act).

`/?token=...` (any page) trades the token for an HttpOnly, SameSite=Strict cookie
and redirects to the same address without it, so the token leaves the address
bar and the history at once. The cookie holds a digest of the token, not the
token: changing the token file signs every browser out. A wrong or missing
token gets 401 and a page that holds no board data.

The redirect goes only to a path of the board: `//host/...` or `/\\host/...` would be
another host to a browser, so those go to `/`. The cookie is `Secure` when the request
came over TLS, or when a trusted proxy (`[web] trusted_proxies`) says it did; anyone
else's X-Forwarded-Proto or Forwarded header counts for nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from collections.abc import Awaitable, Callable, Iterable

from aiohttp import web
from yarl import URL

from chatbot.board.web_sessions import WebSession

COOKIE = "board_session"
# A signed-in owner's session (owners.py): its own secret, looked up in the store.
OWNER_COOKIE = "board_owner"
COOKIE_MAX_AGE_S = 30 * 86400
# Paths anyone may read: health for monitoring says nothing about cards.
# The browser's own look for an icon (on the sign-in page, before any credential) is
# answered with nothing rather than a 401 in its console. The stylesheet and icon hold
# nothing of the board either: the sign-in and 401 pages look like the board.
OPEN_PATHS = frozenset({"/healthz", "/favicon.ico", "/static/board.css", "/static/icon.svg"})
# Signing in needs no token: the link's own token is the credential.
SIGN_IN = "/signin"
# One slash, then no slash or backslash: browsers read both as the start of another host.
# Whitespace and control characters out too: browsers drop some of them from addresses.
BOARD_PATH = re.compile(r"/(?![/\\])[^\\\s\x00-\x1f\x7f]*")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SessionOf = Callable[[str], Awaitable[WebSession | None]]
# The request's owner session (None: the token's reader), and whether the browser
# brought the cookie of one that has ended.
SESSION = web.RequestKey("owner_session", object)
SESSION_ENDED = web.RequestKey("owner_session_ended", bool)


def board_path(raw_path: str) -> str:
    """Where to send the browser on: the path asked for if it is the board's, else `/`."""
    return raw_path if BOARD_PATH.fullmatch(raw_path) else "/"


def _last(values: str) -> str:
    # Each proxy appends its own: the last is the one the trusted proxy wrote.
    return values.rsplit(",", 1)[-1].strip().lower()


class Guard:
    def __init__(
        self,
        token: str,
        unauthorized: Callable[[web.Request], web.Response],
        trusted_proxies: Iterable[str] = (),
        session_of: SessionOf | None = None,
    ):
        self._session_of = session_of
        self._proxies = tuple(ipaddress.ip_network(p, strict=False) for p in trusted_proxies)
        self._token = token.encode()
        self._cookie = hmac.new(self._token, b"intent-board web cookie v1", hashlib.sha256)
        self._cookie_value = self._cookie.hexdigest()
        self._unauthorized = unauthorized

    def _token_ok(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self._token)

    def allowed(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value:
            return self._token_ok(value.strip())
        cookie = request.cookies.get(COOKIE, "")
        return bool(cookie) and hmac.compare_digest(cookie, self._cookie_value)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path
        if path in OPEN_PATHS or path == SIGN_IN or path.startswith(SIGN_IN + "/"):
            return await handler(request)
        cookie = request.cookies.get(OWNER_COOKIE, "")
        session = None
        if cookie and self._session_of is not None:
            session = await self._session_of(cookie)
        # A signed-in owner reads (and acts); the token alone only reads.
        request[SESSION] = session
        request[SESSION_ENDED] = bool(cookie) and session is None
        if "token" in request.query:
            return self._trade(request)
        if session is None and not self.allowed(request):
            return self._unauthorized(request)
        return await handler(request)

    def _trade(self, request: web.Request) -> web.StreamResponse:
        if not self._token_ok(request.query["token"]):
            return self._unauthorized(request)
        query = request.rel_url.query.copy()
        query.popall("token")
        target = URL(board_path(request.rel_url.raw_path), encoded=True).with_query(query)
        response = web.Response(status=303, headers={"Location": str(target)})
        response.set_cookie(
            COOKIE,
            self._cookie_value,
            max_age=COOKIE_MAX_AGE_S,
            path="/",
            httponly=True,
            samesite="Strict",
            # On plain http a Secure cookie would never come back.
            secure=self.over_tls(request),
        )
        return response

    def _from_proxy(self, remote: str | None) -> bool:
        try:
            address = ipaddress.ip_address(remote or "")
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            address = address.ipv4_mapped
        return any(address in network for network in self._proxies)

    def over_tls(self, request: web.Request) -> bool:
        """The browser's side was TLS: ours, or a trusted proxy's that says so."""
        if request.secure:
            return True
        if not self._from_proxy(request.remote):
            return False
        forwarded = request.forwarded[-1].get("proto", "") if request.forwarded else ""
        said = (forwarded.lower(), _last(request.headers.get("X-Forwarded-Proto", "")))
        return "https" in said
