"""The board's one credential: a token from a file, as a Bearer header or a cookie.

`/?token=...` (any page) trades the token for an HttpOnly, SameSite=Strict cookie
and redirects to the same address without it, so the token leaves the address
bar and the history at once. The cookie holds a digest of the token, not the
token: changing the token file signs every browser out. A wrong or missing
token gets 401 and a page that holds no board data.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable

from aiohttp import web

COOKIE = "board_session"
COOKIE_MAX_AGE_S = 30 * 86400
# Paths anyone may read: health for monitoring says nothing about cards.
OPEN_PATHS = frozenset({"/healthz"})

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Guard:
    def __init__(self, token: str, unauthorized: Callable[[web.Request], web.Response]):
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
        if request.path in OPEN_PATHS:
            return await handler(request)
        if "token" in request.query:
            return self._trade(request)
        if not self.allowed(request):
            return self._unauthorized(request)
        return await handler(request)

    def _trade(self, request: web.Request) -> web.StreamResponse:
        if not self._token_ok(request.query["token"]):
            return self._unauthorized(request)
        query = request.rel_url.query.copy()
        query.popall("token")
        target = request.rel_url.with_query(query)
        response = web.Response(status=303, headers={"Location": str(target)})
        response.set_cookie(
            COOKIE,
            self._cookie_value,
            max_age=COOKIE_MAX_AGE_S,
            path="/",
            httponly=True,
            samesite="Strict",
            # Behind a TLS proxy the scheme is https only if the proxy says so; on plain
            # http a Secure cookie would never come back.
            secure=request.secure,
        )
        return response
