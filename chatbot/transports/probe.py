"""`chatbot check`: try each configured transport once and report per room.

Each probe connects, logs in, joins every configured room and says whether
the bot may post there and (XMPP) whether the room shows real JIDs, without
which nothing said in that room can count as an owner's.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import aiohttp
from nio import JoinError, RoomGetStateEventResponse
from slixmpp import JID

from . import xmpp_stanzas
from .base import ProbeReport, RoomReport, StateStore, TransportError
from .matrix import MatrixSettings, login
from .matrix import make_client as make_matrix_client
from .matrix_crypto import room_encryption
from .xmpp import XmppSettings, connect
from .xmpp import make_client as make_xmpp_client
from .xmpp_connection import login_failure, shutdown
from .xmpp_rooms import JoinRefused, fallback_nicks, join


async def probe_xmpp(settings: XmppSettings, *, within: float = 15.0) -> ProbeReport:
    # Its own resource, so a running bot on the same account is not disturbed.
    client = make_xmpp_client(settings, resource=f"check-{uuid.uuid4().hex[:8]}")
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[str] = loop.create_future()

    def settle(value: str) -> None:
        if not outcome.done():
            outcome.set_result(value)

    client.add_event_handler("session_start", lambda _: settle("ok"))
    client.add_event_handler("failed_all_auth", lambda _: settle("auth"))
    client.add_event_handler("connection_failed", lambda e: settle(f"connect:{e}"))
    client.add_event_handler("disconnected", lambda e: settle(f"disconnected:{e}"))
    connect(client, settings)
    try:
        try:
            result = await asyncio.wait_for(outcome, within)
        except TimeoutError:
            result = "connect:timed out"
        if result != "ok":
            client.cancel_connection_attempt()
            where = f"{settings.host or JID(settings.jid).domain}:{settings.port}"
            return ProbeReport(
                "xmpp",
                settings.jid,
                connected=result == "auth",
                logged_in=False,
                error=(
                    login_failure(client, settings)
                    if result == "auth"
                    else _xmpp_unreachable(where, result, within)
                ),
            )
        client.send_presence()
        rooms = [await _probe_muc(client, room, settings.nick, within) for room in settings.rooms]
        return ProbeReport("xmpp", settings.jid, True, True, tuple(rooms))
    finally:
        await shutdown(client)


async def _probe_muc(client, room: str, nick: str, within: float) -> RoomReport:
    """Join as the bot would: its nick, or (someone sits on it) the first free fallback."""
    taken = []
    for candidate in [nick, *fallback_nicks(nick)]:
        try:
            pres = await join(client, room, candidate, within=within)
            break
        except JoinRefused as refused:
            if refused.condition != "conflict":
                return RoomReport(room, False, detail=f"join refused: {refused.condition}")
            taken.append(candidate)
        except TimeoutError:
            return RoomReport(room, False, detail="join timed out")
    else:
        return RoomReport(room, False, detail=f"nicks {', '.join(taken)} are all taken")
    codes = xmpp_stanzas.room_status_codes(pres)
    item = pres.xml.find(f"{{{xmpp_stanzas.NS_MUC_USER}}}x/{{{xmpp_stanzas.NS_MUC_USER}}}item")
    role = item.get("role", "") if item is not None else ""
    sees = 100 in codes
    detail = f"role {role}" + ("" if sees else "; real JIDs hidden: no owner commands here")
    if taken:
        detail += (
            f"; the nick {nick!r} is taken by another occupant: the bot joins as "
            f"{candidate!r} and takes {nick!r} back when it is free"
        )
    client.plugin["xep_0045"].leave_muc(JID(room), pres["from"].resource)
    return RoomReport(
        room, True, can_post=role in ("participant", "moderator"), sees_real_ids=sees, detail=detail
    )


async def probe_matrix(
    settings: MatrixSettings, store: StateStore | None = None, *, within: float = 15.0
) -> ProbeReport:
    """Log in (with the store's device when given), join each room, read its power levels."""
    # No Olm machine: the running bot owns the crypto store; check only reads it.
    client = make_matrix_client(settings, encryption=False)
    fresh_device = store is None and not settings.access_token
    try:
        try:
            await asyncio.wait_for(login(client, settings, store, keep_device=True), within)
        except TransportError as exc:
            return ProbeReport("matrix", settings.user_id, True, False, error=str(exc))
        except Exception as exc:  # noqa: BLE001 - unreachable server, DNS, TLS...
            error = _matrix_unreachable(settings.homeserver, exc, within)
            return ProbeReport("matrix", settings.user_id, False, False, error=error)
        rooms = []
        for room in settings.rooms:
            resp = await asyncio.wait_for(client.join(room), within)
            if isinstance(resp, JoinError):
                rooms.append(RoomReport(room, False, detail=f"join refused: {resp.message}"))
                continue
            levels = await client.room_get_state_event(resp.room_id, "m.room.power_levels")
            can_post = None
            if isinstance(levels, RoomGetStateEventResponse):
                pl = levels.content
                mine = pl.get("users", {}).get(client.user_id, pl.get("users_default", 0))
                needed = pl.get("events", {}).get("m.room.message", pl.get("events_default", 0))
                can_post = mine >= needed
            encrypted, readable, why = await room_encryption(client, settings, resp.room_id)
            rooms.append(
                RoomReport(
                    room,
                    True,
                    can_post=can_post,
                    sees_real_ids=True,
                    detail=f"{resp.room_id}; {why}",
                    encrypted=encrypted,
                    can_decrypt=readable,
                )
            )
        return ProbeReport("matrix", settings.user_id, True, True, tuple(rooms))
    finally:
        if fresh_device and client.access_token:
            # Without a store the device would be orphaned on every check.
            with contextlib.suppress(Exception):
                await client.logout()
        await client.close()


def _matrix_unreachable(where: str, error: BaseException, within: float) -> str:
    """Why the homeserver could not be asked, in words that point at the fix."""
    if isinstance(error, TimeoutError):
        return f"no answer from {where} within {within:.0f}s: is it running, is the address right?"
    if isinstance(error, aiohttp.ClientConnectorDNSError):
        return f"cannot find the host of {where}: check matrix.homeserver"
    if isinstance(error, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        return f"TLS to {where} failed ({error.__class__.__name__}): check its certificate"
    if isinstance(error, aiohttp.ClientConnectorError):
        return f"cannot reach {where}: connection refused: is it running, is the port right?"
    return f"cannot reach {where}: {type(error).__name__}: {error}"


def _xmpp_unreachable(where: str, result: str, within: float) -> str:
    kind, _, detail = result.partition(":")
    if "timed out" in detail:
        return f"no answer from {where} within {within:.0f}s: is it running, is the address right?"
    if "DNS" in detail or "Name or service not known" in detail:
        return f"cannot find the host of {where}: check xmpp.host or the JID's domain"
    if "111" in detail or "refused" in detail.lower():
        return f"cannot reach {where}: connection refused: is it running, is the port right?"
    if kind == "disconnected":
        return f"{where} closed the connection before the login ({detail or 'no reason given'})"
    return f"cannot reach {where}: {detail or result}"
