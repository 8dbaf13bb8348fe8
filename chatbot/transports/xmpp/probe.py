"""`chatbot check` on XMPP: log in once and report per room.

The probe connects, logs in, joins every configured room as the bot would and
says whether the bot may post there and whether the room shows real JIDs,
without which nothing said in that room can count as an owner's.
"""

from __future__ import annotations

import asyncio
import uuid

import slixmpp
from slixmpp import JID

from ..base import ProbeReport, RoomReport
from . import stanzas
from .connection import XmppSettings, connect, login_failure, make_client, shutdown
from .rooms import JoinRefused, fallback_nicks, join
from .stanzas import TRANSPORT


async def probe_xmpp(settings: XmppSettings, *, within: float = 15.0) -> ProbeReport:
    # Its own resource, so a running bot on the same account is not disturbed.
    client = make_client(settings, resource=f"check-{uuid.uuid4().hex[:8]}")
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
                TRANSPORT,
                settings.jid,
                connected=result == "auth",
                logged_in=False,
                error=(
                    login_failure(client, settings)
                    if result == "auth"
                    else _xmpp_unreachable(where, result, within, bool(settings.host))
                ),
            )
        client.send_presence()
        rooms = [await _probe_muc(client, room, settings.nick, within) for room in settings.rooms]
        return ProbeReport(TRANSPORT, settings.jid, True, True, tuple(rooms))
    finally:
        await shutdown(client)


async def _probe_muc(client: slixmpp.ClientXMPP, room: str, nick: str, within: float) -> RoomReport:
    """Join as the bot would: its nick, or (someone sits on it) the first free fallback."""
    taken: list[str] = []
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
    codes = stanzas.room_status_codes(pres)
    item = pres.xml.find(f"{{{stanzas.NS_MUC_USER}}}x/{{{stanzas.NS_MUC_USER}}}item")
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


def _xmpp_unreachable(where: str, result: str, within: float, host_set: bool) -> str:
    kind, _, detail = result.partition(":")
    # Name the keys that chose the address: a host left over from an example (a
    # loopback one) is the likelier mistake than the port.
    keys = "are xmpp.host and xmpp.port right" if host_set else "is the JID's domain right"
    if "timed out" in detail:
        return f"no answer from {where} within {within:.0f}s: is it running, {keys}?"
    if "DNS" in detail or "Name or service not known" in detail:
        return f"cannot find the host of {where}: check xmpp.host or the JID's domain"
    if "111" in detail or "refused" in detail.lower():
        return f"cannot reach {where}: connection refused: is it running there, {keys}?"
    if kind == "disconnected":
        return f"{where} closed the connection before the login ({detail or 'no reason given'})"
    return f"cannot reach {where}: {detail or result}"
