"""Matrix transport (matrix-nio): rooms, replies, reactions, restart-safe sync.

One loop owns the connection (mautrix `syncer` style): `sync_forever`, with a
SyncResponse callback that dispatches every event in order and only then
saves the sync token, so a crash mid-batch replays the batch (processed event
ids stop double execution) and a restart neither replays old commands nor
skips new ones. A sync that fails takes the transport offline and is retried
after a capped back-off. Rate limits (429) are waited out by nio's request
loop, which honours retry_after_ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any

from nio import (
    AsyncClient,
    AsyncClientConfig,
    ErrorResponse,
    InviteMemberEvent,
    JoinError,
    LoginResponse,
    MessageDirection,
    RoomCreateError,
    RoomMessagesError,
    RoomPreset,
    RoomResolveAliasResponse,
    RoomSendError,
    SyncError,
    SyncResponse,
    WhoamiResponse,
)

from . import matrix_events as wire
from .base import (
    Backoff,
    EventHandler,
    Identity,
    IncomingReaction,
    NotConnected,
    Room,
    StateStore,
    Target,
    TargetUnavailable,
    Transport,
    TransportError,
    redacting_repr,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, repr=False)
class MatrixSettings:
    homeserver: str
    user_id: str
    password: str | None = None
    #: Used instead of a password login when given (read from a file by the config).
    access_token: str | None = None
    #: Rooms (ids or aliases) joined at start; the operator configured them.
    rooms: tuple[str, ...] = ()
    #: Only invites from these user ids are accepted.
    owners: tuple[str, ...] = ()
    device_name: str = "intent-board"
    sync_timeout_ms: int = 30000
    #: Events per room per sync; a longer gap is back-filled with /messages.
    timeline_limit: int = 100
    reconnect_initial: float = 1.0
    reconnect_max: float = 60.0
    send_timeout: float = 30.0
    #: nio retries a dead connection this often before a call fails.
    request_retries: int = 2

    def __repr__(self) -> str:
        return redacting_repr(self, ("password", "access_token"))


def make_client(settings: MatrixSettings) -> AsyncClient:
    config = AsyncClientConfig(
        max_limit_exceeded=None,  # wait out every 429, as often as it comes
        max_timeouts=settings.request_retries,
        backoff_factor=0.1,
        max_timeout_retry_wait_time=settings.reconnect_max,
        request_timeout=settings.sync_timeout_ms / 1000 + 15,
    )
    return AsyncClient(settings.homeserver, settings.user_id, config=config)


async def login(client: AsyncClient, settings: MatrixSettings, store: StateStore | None) -> None:
    """Token from settings, else device+token from the store, else a password login."""
    uid = settings.user_id
    if settings.access_token:
        client.access_token = settings.access_token
        who = await client.whoami()
        if not isinstance(who, WhoamiResponse):
            raise TransportError(f"Matrix access token for {uid} refused: {who}")
        client.restore_login(who.user_id, who.device_id or "", settings.access_token)
        return
    if store is not None:
        device = await store.get_value(f"matrix:{uid}:device_id")
        token = await store.get_value(f"matrix:{uid}:access_token")
        if device and token:
            client.restore_login(uid, device, token)
            who = await client.whoami()
            if isinstance(who, WhoamiResponse):
                return
            log.warning("stored Matrix token for %s no longer works; logging in again", uid)
            client.access_token = ""
    if not settings.password:
        raise TransportError(f"no Matrix password or access token for {uid}")
    resp = await client.login(settings.password, device_name=settings.device_name)
    if not isinstance(resp, LoginResponse):
        raise TransportError(f"Matrix login as {uid} failed: {resp}")
    if store is not None:
        await store.set_value(f"matrix:{uid}:device_id", resp.device_id)
        await store.set_value(f"matrix:{uid}:access_token", resp.access_token)


class MatrixTransport(Transport):
    name = "matrix"

    def __init__(
        self, settings: MatrixSettings, store: StateStore, *, handler: EventHandler | None = None
    ) -> None:
        super().__init__(handler=handler)
        self.settings = settings
        self.store = store
        self.client: AsyncClient | None = None
        self.dropped: Counter[str] = Counter()
        self._task: asyncio.Task | None = None
        self._stopping = False
        self._key = f"matrix:{settings.user_id}"
        self._direct: dict[str, bool] = {}
        #: Configured room (alias or id) -> room id; events always carry the id.
        self.room_ids: dict[str, str] = {}
        self._synced = False

    async def start(self) -> None:
        """Log in and sync in the background; `wait_online()` says when the first sync is in.

        A refused login raises here; a homeserver that cannot be reached is
        retried in the background, so the bot can start while it is down.
        """
        self._stopping = False
        self.client = make_client(self.settings)
        self.client.add_response_callback(self._on_sync, SyncResponse)
        self.client.add_response_callback(self._on_sync_error, SyncError)
        try:
            await self._log_in()
        except TransportError:
            raise
        except Exception as exc:  # noqa: BLE001 - unreachable now; the loop retries
            log.warning("Matrix homeserver unreachable (%r); will keep trying", exc)
        self._task = asyncio.create_task(self._sync_loop(), name="matrix-sync")

    async def _log_in(self) -> None:
        assert self.client is not None
        await login(self.client, self.settings, self.store)
        for room in self.settings.rooms:
            resp = await self.client.join(room)
            if isinstance(resp, JoinError):
                log.error("could not join %s: %s", room, resp.message)
            else:
                self.room_ids[room] = resp.room_id

    async def stop(self) -> None:
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        if self.client is not None:
            await self.client.close()
        await self._set_online(False)

    async def _sync_loop(self) -> None:
        assert self.client is not None
        backoff = Backoff(self.settings.reconnect_initial, self.settings.reconnect_max)
        timeline = {"room": {"timeline": {"limit": self.settings.timeline_limit}}}
        while not self._stopping:
            since = await self.store.get_value(f"{self._key}:next_batch")
            try:
                if not self.client.logged_in:
                    await self._log_in()
                await self.client.sync_forever(
                    timeout=self.settings.sync_timeout_ms,
                    sync_filter=timeline,
                    since=since,
                    # Room state is only in memory; fetch all of it after a restart.
                    full_state=True,
                    # First run ever: start from now, replay nothing.
                    first_sync_filter=None if since else {"room": {"timeline": {"limit": 0}}},
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure: offline, back off, retry
                await self._set_online(False)
                delay = backoff.next_delay()
                log.warning("Matrix sync failed (%r); retrying in %.2fs", exc, delay)
                await asyncio.sleep(delay)
            else:
                backoff.reset()

    async def _on_sync_error(self, response: SyncError) -> None:
        # nio's loop would retry an error answer at once, forever; leave it so
        # that ours backs off (and logs in again if the token was revoked).
        if response.status_code == "M_UNKNOWN_TOKEN" and self.client is not None:
            self.client.access_token = ""
            await self.store.set_value(f"{self._key}:access_token", "")
        raise TransportError(f"Matrix sync refused: {response}")

    async def _on_sync(self, response: SyncResponse) -> None:
        assert self.client is not None
        since = await self.store.get_value(f"{self._key}:next_batch")
        for room_id, info in response.rooms.invite.items():
            await self._on_invite(room_id, info.invite_state)
        for room_id, info in response.rooms.join.items():
            events = [e.source for e in info.timeline.events]
            late = not self._synced  # the first batch after a start: it came while we were away
            if info.timeline.limited and since and info.timeline.prev_batch:
                events = await self._backfill(room_id, info.timeline.prev_batch, since) + events
                late = True
            for source in wire.after_own_join(events, self.client.user_id):
                await self._handle(room_id, source, late=late)
        self._synced = True
        # Only now: every event of this batch has been handled.
        await self.store.set_value(f"{self._key}:next_batch", response.next_batch)
        await self._set_online(True)

    async def _backfill(self, room_id: str, start: str, until: str) -> list[dict[str, Any]]:
        """Events the sync left out between our last token and this batch (oldest first)."""
        assert self.client is not None
        older: list[dict[str, Any]] = []
        token: str | None = start
        while token and len(older) < 5000:
            resp = await self.client.room_messages(
                room_id, start=token, end=until, direction=MessageDirection.back, limit=100
            )
            if isinstance(resp, RoomMessagesError) or not resp.chunk:
                break
            older.extend(e.source for e in resp.chunk)
            token = resp.end
        log.info("back-filled %d events in %s", len(older), room_id)
        return list(reversed(older))

    async def _on_invite(self, room_id: str, state: list[Any]) -> None:
        assert self.client is not None
        me = self.client.user_id
        # nio's InviteMemberEvent keeps content out of .source, so read its fields.
        invite = next(
            (
                e
                for e in state
                if isinstance(e, InviteMemberEvent)
                and e.state_key == me
                and e.membership == "invite"
            ),
            None,
        )
        inviter = invite.sender if invite else None
        if inviter not in self.settings.owners:
            self.dropped["invite-not-owner"] += 1
            log.info("ignoring invite to %s from %s (not an owner)", room_id, inviter)
            return
        resp = await self.client.join(room_id)
        if isinstance(resp, JoinError):
            log.error("could not join %s on %s's invite: %s", room_id, inviter, resp.message)
            return
        if (invite.content or {}).get("is_direct"):
            await self._mark_direct(room_id, inviter)
        log.info("joined %s on invite from owner %s", room_id, inviter)

    async def _mark_direct(self, room_id: str, user_id: str) -> None:
        self._direct[room_id] = True
        await self.store.set_value(f"{self._key}:direct:{room_id}", user_id)
        await self.store.set_value(f"{self._key}:dm:{user_id}", room_id)

    async def _is_direct(self, room_id: str) -> bool:
        if room_id not in self._direct:
            value = await self.store.get_value(f"{self._key}:direct:{room_id}")
            self._direct[room_id] = value is not None
        return self._direct[room_id]

    async def _handle(self, room_id: str, source: dict[str, Any], *, late: bool = False) -> None:
        """One timeline event; `late` when it came while we were away (it gets its time)."""
        assert self.client is not None
        result = wire.parse_event(
            source,
            room_id=room_id,
            own_user_id=self.client.user_id,
            is_direct=await self._is_direct(room_id),
        )
        if isinstance(result, wire.Dropped):
            self.dropped[result.reason] += 1
            return
        event_id = source["event_id"]
        sender = Identity(self.name, source["sender"])
        state = self._state_for(self.store, sender)
        if not await state.mark_processed(self.name, event_id):
            self.dropped["duplicate"] += 1
            return
        chat = Room(self.name, room_id)
        direct = await self._is_direct(room_id)
        stamp = source.get("origin_server_ts")
        at = stamp / 1000 if late and isinstance(stamp, int | float) else None
        if isinstance(result, wire.ReactionAdded):
            # Kept so that a later redaction can say which key went away.
            await state.set_value(
                f"{self._key}:reaction:{event_id}",
                json.dumps(
                    {"target": result.target_id, "key": result.key, "sender": result.sender}
                ),
            )
            await self._emit(
                IncomingReaction(
                    transport=self.name,
                    chat=chat,
                    sender=Identity(self.name, result.sender),
                    target_id=result.target_id,
                    added=frozenset({result.key}),
                    message_id=event_id,
                    is_direct=direct,
                    sender_name=result.sender,
                    at=at,
                )
            )
        elif isinstance(result, wire.Redaction):
            known = await state.get_value(f"{self._key}:reaction:{result.redacts}")
            if known is None:
                self.dropped["redaction-unknown"] += 1
                return
            reaction = json.loads(known)
            await self._emit(
                IncomingReaction(
                    transport=self.name,
                    chat=chat,
                    sender=Identity(self.name, result.sender),
                    target_id=reaction["target"],
                    removed=frozenset({reaction["key"]}),
                    message_id=event_id,
                    is_direct=direct,
                    sender_name=result.sender,
                    at=at,
                )
            )
        else:
            await self._emit(dataclasses.replace(result, at=at) if at is not None else result)

    # -- outgoing ------------------------------------------------------------

    async def _room_for(self, target: Target) -> str:
        if self.client is None or not self.client.access_token:
            raise NotConnected("Matrix is not logged in")
        if isinstance(target, Room):
            if not target.id.startswith("#"):
                return target.id
            # An alias from the configuration: /send wants the room id.
            if target.id not in self.room_ids:
                resp = await self.client.room_resolve_alias(target.id)
                if not isinstance(resp, RoomResolveAliasResponse):
                    raise TargetUnavailable(f"unknown Matrix room alias {target.id}: {resp}")
                self.room_ids[target.id] = resp.room_id
            return self.room_ids[target.id]
        room_id = await self.store.get_value(f"{self._key}:dm:{target.id}")
        if room_id:
            return room_id
        resp = await self.client.room_create(
            is_direct=True, invite=[target.id], preset=RoomPreset.trusted_private_chat
        )
        if isinstance(resp, RoomCreateError):
            raise TargetUnavailable(f"could not open a direct chat with {target.id}: {resp}")
        await self._mark_direct(resp.room_id, target.id)
        return resp.room_id

    async def _room_send(
        self, room_id: str, etype: str, content: dict[str, Any], txn_id: str
    ) -> str:
        if self.client is None or not self.client.access_token:
            raise NotConnected("Matrix is not logged in")
        try:
            resp = await asyncio.wait_for(
                self.client.room_send(room_id, etype, content, tx_id=txn_id),
                self.settings.send_timeout,
            )
        except OSError as exc:
            raise NotConnected(f"Matrix send to {room_id} failed: {exc!r}") from exc
        except TimeoutError as exc:
            raise TransportError(f"Matrix send to {room_id} timed out") from exc
        if isinstance(resp, RoomSendError | ErrorResponse):
            # Not allowed there (kicked, no power): the room's fault, not this message's.
            forbidden = resp.status_code in ("M_FORBIDDEN", "M_NOT_FOUND")
            kind = TargetUnavailable if forbidden else TransportError
            raise kind(f"Matrix send to {room_id} refused: {resp}")
        return resp.event_id

    async def send(
        self,
        target: Target,
        text: str,
        *,
        reply_to: str | None = None,
        html: str | None = None,
        txn_id: str | None = None,
    ) -> str:
        """Post an m.notice; the same txn_id again (after a crash) posts it once."""
        room_id = await self._room_for(target)
        content = wire.notice_content(text, html, reply_to=reply_to)
        if wire.fit_content(content):
            log.warning("message to %s cut to %d bytes", room_id, wire.MAX_CONTENT_BYTES)
        return await self._room_send(room_id, "m.room.message", content, txn_id or uuid.uuid4().hex)

    async def react(self, target: Target, message_id: str, key: str) -> str | None:
        room_id = await self._room_for(target)
        return await self._room_send(
            room_id,
            "m.reaction",
            wire.reaction_content(message_id, key),
            wire.reaction_txn_id(room_id, message_id, key),
        )
