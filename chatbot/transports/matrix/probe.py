"""`chatbot check` on Matrix: log in once and report per room.

The probe logs in (with the bot's own device when its store is given), joins every
configured room and says whether the bot may post there, whether the room is
encrypted and whether the bot could read it.
"""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
from nio import JoinError, RoomGetStateEventResponse

from ..base import ProbeReport, RoomReport, StateStore, TransportError
from .crypto import room_encryption
from .events import TRANSPORT
from .session import MatrixSettings, login, make_client


async def probe_matrix(
    settings: MatrixSettings, store: StateStore | None = None, *, within: float = 15.0
) -> ProbeReport:
    """Log in (with the store's device when given), join each room, read its power levels."""
    # No Olm machine: the running bot owns the crypto store; check only reads it.
    client = make_client(settings, encryption=False)
    fresh_device = store is None and not settings.access_token
    try:
        try:
            await asyncio.wait_for(login(client, settings, store, keep_device=True), within)
        except TransportError as exc:
            return ProbeReport(TRANSPORT, settings.user_id, True, False, error=str(exc))
        except Exception as exc:  # noqa: BLE001 - unreachable server, DNS, TLS...
            error = _matrix_unreachable(settings.homeserver, exc, within)
            return ProbeReport(TRANSPORT, settings.user_id, False, False, error=error)
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
        return ProbeReport(TRANSPORT, settings.user_id, True, True, tuple(rooms))
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
