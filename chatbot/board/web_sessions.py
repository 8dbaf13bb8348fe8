"""Who is signed in to the web board: links an owner asks for in chat, and sessions.

Chat issues a link (`/web`), the web board turns it into a session once and looks the
session up on every request; `/web sessions` and `/web revoke` read and end them. The
secrets (the link's token, the session cookie) leave here once and are stored as
digests only; the CSRF token of a session is stored as is, since the page shows it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from chatbot.store import Store, StoreUnwritable, kv
from chatbot.store import web_sessions as rows
from chatbot.store.chat import CREDENTIAL_PURPOSE  # noqa: F401 - the chat side posts with it
from chatbot.store.web_sessions import WebSession

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "CREDENTIAL_PURPOSE",
    "WebSession",
]

#: What a web action answered, one per thing said: (text, whether it was a refusal), as
#: chat would have answered the command; chat makes them (chat/web_acts.py), the web
#: keeps them for the session's next page.
Said = tuple[str, bool]

LINK_VALID_S = 600.0
SESSION_VALID_S = 30 * 86400.0
# Last use is written at most this often per session: a page load is not a write.
TOUCH_EVERY_S = 60.0
# 32 random bytes: 256 bits, well past guessing.
TOKEN_BYTES = 32
USER_AGENT_CHARS = 200
# Which board token the sessions were made under: salted and stretched, so a copy of
# the database does not help guess a short token.
TOKEN_MARK_KEY = "web:token_mark"
TOKEN_MARK_ROUNDS = 100_000


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_mark(token: str, salt: str) -> str:
    stretched = hashlib.pbkdf2_hmac("sha256", token.encode(), salt.encode(), TOKEN_MARK_ROUNDS)
    return f"{salt}${stretched.hex()}"


def same_token(token: str, mark: str) -> bool:
    salt, _, _ = mark.partition("$")
    return hmac.compare_digest(token_mark(token, salt), mark)


@dataclass(frozen=True)
class Link:
    token: str
    expires_at: float


@dataclass(frozen=True)
class SignedIn:
    cookie: str  # the session's secret, for the cookie only
    session: WebSession


class LinkRefused(Exception):
    """A sign-in link that signs nobody in; `why` is "unknown", "used", "expired" or
    "revoked"."""

    def __init__(self, why: str):
        super().__init__(f"sign-in link {why}")
        self.why = why


class WebSessions:
    def __init__(self, store: Store, clock: Callable[[], float] = time.time):
        self.store = store
        self.clock = clock

    async def issue(self, identity: str) -> Link:
        """A one-time sign-in link for `identity`, valid LINK_VALID_S."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        now = self.clock()
        expires = now + LINK_VALID_S
        csrf = secrets.token_urlsafe(TOKEN_BYTES)
        async with self.store.transaction() as db:
            await rows.add_link(db, identity, digest(token), csrf, now, expires)
        return Link(token, expires)

    async def link(self, token: str) -> WebSession:
        """The link's row if it can still sign in; LinkRefused says why not."""
        found = await rows.by_link(self.store.reader, digest(token))
        return self._usable(found)

    def _usable(self, found: WebSession | None) -> WebSession:
        if found is None:
            raise LinkRefused("unknown")
        if found.revoked_at is not None:
            raise LinkRefused("revoked")
        if found.signed_in_at is not None:
            raise LinkRefused("used")
        if found.link_expires_at <= self.clock():
            raise LinkRefused("expired")
        return found

    async def sign_in(self, token: str, user_agent: str) -> SignedIn:
        """Use the link: it becomes a session, once."""
        cookie = secrets.token_urlsafe(TOKEN_BYTES)
        now = self.clock()
        agent = " ".join(user_agent.split())[:USER_AGENT_CHARS]
        async with self.store.transaction() as db:
            used = await rows.use_link(
                db, digest(token), digest(cookie), now, now + SESSION_VALID_S, agent
            )
            if not used:
                self._usable(await rows.by_link(db, digest(token)))
                raise LinkRefused("used")  # lost a race the read above did not see
            session = await rows.by_session(db, digest(cookie), now)
        assert session is not None
        return SignedIn(cookie, session)

    async def session(self, cookie: str) -> WebSession | None:
        """The live session the cookie belongs to; its last use noted now and then."""
        if not cookie:
            return None
        now = self.clock()
        found = await rows.by_session(self.store.reader, digest(cookie), now)
        if found is not None and (found.last_used_at or 0) + TOUCH_EVERY_S <= now:
            # One statement, waking nobody: live pages and workers need not hear of it.
            # On a full disk the page still shows; only "last used" stays behind.
            with contextlib.suppress(StoreUnwritable):
                await self.store.write_one(rows.TOUCH_SQL, (now, found.id))
        return found

    async def of(self, identity: str) -> list[WebSession]:
        return await rows.of_identity(self.store.reader, identity, self.clock())

    async def keep_only(self, owners: Sequence[str]) -> int:
        """End the sessions of everyone who is no longer an owner (issue 33): a removed
        owner's browser reads nothing more. How many ended."""
        async with self.store.transaction() as db:
            return await rows.revoke_all_but(db, owners, self.clock())

    async def keep_for_token(self, token: str) -> int:
        """End every session and unused link when the board's token is not the one they
        were made under (issue 33): rotating the token file signs every browser out,
        owners' sessions too. How many ended; the first start after an upgrade only
        notes the token."""
        async with self.store.transaction() as db:
            mark = await kv.get_value(db, TOKEN_MARK_KEY)
            if mark is not None and same_token(token, mark):
                return 0
            ended = 0 if mark is None else await rows.revoke_all_but(db, (), self.clock())
            await kv.set_value(db, TOKEN_MARK_KEY, token_mark(token, secrets.token_hex(16)))
            return ended

    async def everyone(self) -> list[WebSession]:
        """Every owner's live session, for `/web sessions all`."""
        return await rows.live(self.store.reader, self.clock())

    async def revoke(self, identity: str, session_id: int | None = None) -> int:
        async with self.store.transaction() as db:
            return await rows.revoke(db, identity, self.clock(), session_id)

    async def revoke_any(self, session_id: int) -> WebSession | None:
        """End one live session, whoever's it is (any owner may); the session ended."""
        now = self.clock()
        async with self.store.transaction() as db:
            found = next((s for s in await rows.live(db, now) if s.id == session_id), None)
            if found is None or not await rows.revoke(db, found.identity, now, session_id):
                return None
            return found

    async def revoke_everyone(self) -> int:
        """End every session and unused link of every owner (`/web revoke all`)."""
        async with self.store.transaction() as db:
            return await rows.revoke_all_but(db, (), self.clock())
