"""Web sign-in: one row per link an owner asked for, and the session it became.

Only digests of the secrets are kept: whoever reads the database cannot sign in. A
link is used by one UPDATE that sets `signed_in_at` only where it is still unset and
unexpired, so two browsers racing with the same link cannot both win.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chatbot.store.db import Db, Row

_COLUMNS = (
    "id, identity, csrf, created_at, signed_in_at, expires_at, last_used_at, user_agent, "
    "revoked_at, link_expires_at"
)


@dataclass(frozen=True)
class WebSession:
    id: int
    identity: str
    csrf: str
    created_at: float
    signed_in_at: float | None
    expires_at: float | None
    last_used_at: float | None
    user_agent: str | None
    revoked_at: float | None
    link_expires_at: float

    @classmethod
    def from_row(cls, row: Row) -> WebSession:
        return cls(*row)


async def add_link(
    db: Db, identity: str, link_hash: str, csrf: str, now: float, expires_at: float
) -> int:
    return await db.insert(
        "INSERT INTO web_sessions (identity, link_hash, link_expires_at, csrf, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (identity, link_hash, expires_at, csrf, now),
    )


async def by_link(db: Db, link_hash: str) -> WebSession | None:
    sql = f"SELECT {_COLUMNS} FROM web_sessions WHERE link_hash = ?"
    row = await db.fetchone(sql, (link_hash,))
    return WebSession.from_row(row) if row else None


async def use_link(
    db: Db,
    link_hash: str,
    session_hash: str,
    now: float,
    expires_at: float,
    user_agent: str,
) -> bool:
    """The link becomes a session, once: False when used, expired or revoked."""
    changed = await db.execute(
        "UPDATE web_sessions SET session_hash = ?, signed_in_at = ?, expires_at = ?, "
        "last_used_at = ?, user_agent = ? WHERE link_hash = ? AND signed_in_at IS NULL "
        "AND revoked_at IS NULL AND link_expires_at > ?",
        (session_hash, now, expires_at, now, user_agent, link_hash, now),
    )
    return changed == 1


async def by_session(db: Db, session_hash: str, now: float) -> WebSession | None:
    """A live session: signed in, not revoked, not expired."""
    row = await db.fetchone(
        f"SELECT {_COLUMNS} FROM web_sessions WHERE session_hash = ? AND revoked_at IS NULL "
        "AND expires_at > ?",
        (session_hash, now),
    )
    return WebSession.from_row(row) if row else None


async def of_identity(db: Db, identity: str, now: float) -> list[WebSession]:
    rows = await db.fetchall(
        f"SELECT {_COLUMNS} FROM web_sessions WHERE identity = ? AND signed_in_at IS NOT NULL "
        "AND revoked_at IS NULL AND expires_at > ? ORDER BY id",
        (identity, now),
    )
    return [WebSession.from_row(row) for row in rows]


async def live(db: Db, now: float) -> list[WebSession]:
    rows = await db.fetchall(
        f"SELECT {_COLUMNS} FROM web_sessions WHERE signed_in_at IS NOT NULL "
        "AND revoked_at IS NULL AND expires_at > ? ORDER BY identity, id",
        (now,),
    )
    return [WebSession.from_row(row) for row in rows]


async def revoke(db: Db, identity: str, now: float, session_id: int | None = None) -> int:
    """End the identity's sessions and unused links (or one session); how many ended."""
    sql = "UPDATE web_sessions SET revoked_at = ? WHERE identity = ? AND revoked_at IS NULL"
    params: tuple[object, ...] = (now, identity)
    if session_id is None:
        sql += " AND (expires_at > ? OR (signed_in_at IS NULL AND link_expires_at > ?))"
        params += (now, now)
    else:
        sql += " AND id = ? AND signed_in_at IS NOT NULL AND expires_at > ?"
        params += (session_id, now)
    return await db.execute(sql, params)


async def revoke_all_but(db: Db, identities: Sequence[str], now: float) -> int:
    """End every session and unused link of anyone not among `identities`."""
    sql = (
        "UPDATE web_sessions SET revoked_at = ? WHERE revoked_at IS NULL "
        "AND (expires_at > ? OR (signed_in_at IS NULL AND link_expires_at > ?))"
    )
    if identities:
        sql += f" AND identity NOT IN ({', '.join('?' * len(identities))})"
    return await db.execute(sql, (now, now, now, *identities))


TOUCH_SQL = "UPDATE web_sessions SET last_used_at = ? WHERE id = ?"
