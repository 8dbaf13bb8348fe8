"""Being in the configured XMPP rooms: join, retry with back-off, defend the nick.

A join can fail for reasons that pass: the room's service is restarting, or a
member sits on the bot's nick (a nick is first come, first served). So a room
that could not be joined is tried again with a capped back-off for as long as
the session lives; a taken nick makes the bot join as `nick-2` (`-3`, ...) at
once and take its own nick back the moment its holder leaves. Being kicked or
the room going away counts as not joined, and is retried the same way.

slixmpp's `join_muc_wait` waits only for success: a refused join (a nick
conflict is a presence error) looks like a time-out there. `join` below waits
for either answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable

import slixmpp
from slixmpp import JID
from slixmpp.stanza import Presence
from slixmpp.xmlstream.handler import Callback
from slixmpp.xmlstream.matcher import MatchXPath

from ..base import Backoff
from . import stanzas as wire
from .connection import XmppSettings, handles

log = logging.getLogger(__name__)

#: Nicks tried after the configured one is taken: nick-2 ... nick-4.
FALLBACKS = 3


class JoinRefused(Exception):
    def __init__(self, condition: str, text: str = ""):
        super().__init__(f"{condition}: {text}" if text else condition)
        self.condition = condition


def fallback_nicks(nick: str) -> list[str]:
    return [f"{nick}-{n}" for n in range(2, FALLBACKS + 2)]


async def join(
    client: slixmpp.ClientXMPP, room: str, nick: str, *, within: float, history: int = 0
) -> Presence:
    """Join `room` as `nick`; our own presence back, or JoinRefused / TimeoutError."""
    answer: asyncio.Future[Presence] = asyncio.get_running_loop().create_future()

    def on_presence(pres: Presence) -> None:
        if pres["from"].bare != room or answer.done():
            return
        refused = pres["type"] == "error" and pres["from"].resource in (nick, "")
        own = pres["type"] != "unavailable" and 110 in wire.room_status_codes(pres)
        if refused or own:
            answer.set_result(pres)

    name = f"join {room} {uuid.uuid4().hex}"
    client.register_handler(
        Callback(name, MatchXPath("{jabber:client}presence"), handles(on_presence))
    )
    muc = client.plugin["xep_0045"]
    # What join_muc_wait would record, so that leave_muc and the plugin's events work.
    muc.rooms[None][JID(room)] = {}
    muc.our_nicks[None][JID(room)] = nick
    try:
        muc.make_join_stanza(JID(room), nick, maxstanzas=history).send()
        pres = await asyncio.wait_for(answer, within)
    finally:
        client.remove_handler(name)
    if pres["type"] == "error":
        raise JoinRefused(pres["error"]["condition"] or "error", pres["error"]["text"] or "")
    return pres


class RoomKeeper:
    """Keeps the transport in its rooms; `states` is the transport's room table."""

    def __init__(
        self,
        settings: XmppSettings,
        client: Callable[[], slixmpp.ClientXMPP | None],
        states: dict[str, wire.RoomState],
        on_joined: Callable[[str], Awaitable[None]],
    ):
        self.settings = settings
        self._client = client
        self.states = states
        self._on_joined = on_joined
        self._retrying: dict[str, asyncio.Task[None]] = {}

    async def join_all(self) -> list[str]:
        """One attempt per room, side by side; the rooms joined. Others retry in the background."""
        self.stop()
        rooms = self.settings.rooms
        results = await asyncio.gather(*(self._attempt(r) for r in rooms), return_exceptions=True)
        joined = []
        for room, result in zip(rooms, results, strict=True):
            if isinstance(result, BaseException):
                log.error("could not join %s: %r; trying again", room, result)
                self._retry(room)
            else:
                joined.append(room)
        return joined

    def stop(self) -> None:
        for task in self._retrying.values():
            task.cancel()
        self._retrying.clear()

    def _retry(self, room: str) -> None:
        if room not in self._retrying or self._retrying[room].done():
            self._retrying[room] = asyncio.create_task(self._keep_trying(room), name=f"join {room}")

    async def _keep_trying(self, room: str) -> None:
        backoff = Backoff(self.settings.reconnect_initial, self.settings.reconnect_max)
        while True:
            await asyncio.sleep(backoff.next_delay())  # the back-off itself: only time passes
            try:
                await self._attempt(room)
            except (JoinRefused, TimeoutError) as error:
                log.warning("still cannot join %s (%r); trying again with back-off", room, error)
                continue
            await self._on_joined(room)
            return

    async def _attempt(self, room: str) -> wire.RoomState:
        client = self._client()
        if client is None:
            raise JoinRefused("not-connected")
        nick = self.settings.nick
        for candidate in [nick, *fallback_nicks(nick)]:
            # Known before the join presence goes out: occupant presences arrive first.
            state = self.states[room] = wire.RoomState(nick=candidate)
            try:
                pres = await join(
                    client,
                    room,
                    candidate,
                    within=self.settings.join_timeout,
                    history=self.settings.join_history,
                )
            except JoinRefused as refused:
                if refused.condition != "conflict":
                    raise
                log.warning("the nick %r is taken in %s", candidate, room)
                continue
            state.non_anonymous = 100 in wire.room_status_codes(pres)
            state.nick = pres["from"].resource or candidate
            state.joined = True
            log.info(
                "joined %s as %s (real JIDs %s)",
                room,
                state.nick,
                "visible" if state.non_anonymous else "hidden",
            )
            if state.nick != nick:
                log.warning(
                    "joined %s as %r because %r is taken by another occupant; "
                    "the bot takes %r back when it is free",
                    room,
                    state.nick,
                    nick,
                    nick,
                )
            return state
        raise JoinRefused("conflict", f"every nick from {nick!r} on is taken")

    def on_presence(self, pres: Presence) -> None:
        """Follow our own membership and the holder of our nick (called as presence arrives)."""
        room = pres["from"].bare
        state = self.states.get(room)
        nick = pres["from"].resource
        if state is None or not nick or not state.joined:
            return
        codes = wire.room_status_codes(pres)
        wanted = self.settings.nick
        if pres["type"] == "unavailable":
            if 110 in codes and 303 not in codes:
                state.joined = False
                log.warning("left %s (status %s); joining again", room, sorted(codes) or "-")
                self._retry(room)
            elif nick == wanted and state.nick != wanted and 110 not in codes:
                self._take_back(room)
        elif pres["type"] != "error" and 110 in codes and nick != state.nick:
            log.info("now %s in %s (was %s)", nick, room, state.nick)
            state.nick = nick

    def _take_back(self, room: str) -> None:
        client = self._client()
        if client is not None:
            # A nick change (XEP-0045 7.6); a refusal leaves us where we are.
            client.send_presence(pto=JID(f"{room}/{self.settings.nick}"))

    async def close(self) -> None:
        tasks = list(self._retrying.values())
        self.stop()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
