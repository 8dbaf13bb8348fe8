"""Matrix transport (matrix-nio): rooms, replies, reactions, restart-safe sync.

One loop owns the connection (mautrix `syncer` style): `sync_forever`, with a
SyncResponse callback that dispatches every event in order and only then
saves the sync token, so a crash mid-batch replays the batch (processed event
ids stop double execution) and a restart neither replays old commands nor
skips new ones. A sync that fails takes the transport offline and is retried
after a capped back-off. Rate limits (429) are waited out by nio's request
loop, which honours retry_after_ms.

With a crypto store (session, crypto) nio decrypts the timeline
during the sync; each event then carries the facts about its sending device,
a message whose key is missing is held until the key comes, and everything we
post into an encrypted room is encrypted, reactions included. Owners verify
the bot's view of their devices with SAS (verify). Files come in as messages
whose fetch is bound to the safe download and go out through the media
repository (upload, download, media).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from collections import Counter
from typing import Any

from nio import (
    AsyncClient,
    Event,
    InviteMemberEvent,
    JoinError,
    MegolmEvent,
    MessageDirection,
    RoomMessagesError,
    SyncError,
    SyncResponse,
)

from ..base import (
    Backoff,
    Envelope,
    EventHandler,
    Identity,
    IncomingReaction,
    IncomingUnreadable,
    Room,
    StateStore,
    Transport,
    TransportError,
)
from . import TRANSPORT
from . import events as wire
from .crypto import MatrixCrypto
from .session import MatrixSettings, login, make_client
from .upload import MatrixFiles
from .verify import Verifier

__all__ = ["MatrixSettings", "MatrixTransport", "login", "make_client"]

log = logging.getLogger(__name__)


class MatrixTransport(MatrixFiles, Transport):
    name = TRANSPORT
    sends_files = True

    def __init__(
        self, settings: MatrixSettings, store: StateStore, *, handler: EventHandler | None = None
    ) -> None:
        super().__init__(handler=handler)
        self.settings = settings
        self.store = store
        self.client: AsyncClient | None = None
        self.dropped: Counter[str] = Counter()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._key = f"matrix:{settings.user_id}"
        self._direct: dict[str, bool] = {}
        #: Configured room (alias or id) -> room id; events always carry the id.
        self.room_ids: dict[str, str] = {}
        self._synced = False
        self.crypto: MatrixCrypto | None = None
        self._verifier: Verifier | None = None
        #: Notified after each handled sync (a room we just created shows up there).
        self._sync_done = asyncio.Condition()

    async def start(self) -> None:
        """Log in and sync in the background; `wait_online()` says when the first sync is in.

        A refused login raises here; a homeserver that cannot be reached is
        retried in the background, so the bot can start while it is down.
        """
        self._stopping = False
        self.client = make_client(self.settings)
        if self.settings.encrypted:
            self.crypto = MatrixCrypto(
                self.client,
                self.store,
                key=self._key,
                trust=self.settings.trust,
                counts=lambda who: self._counts(who),
            )
            self._verifier = Verifier(
                self.client, frozenset(self.settings.owners), self._emit, self.crypto.find_device
            )
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
        if self._verifier is not None:
            for event in response.to_device_events:
                await self._verifier.handle(event)
        for room_id, info in response.rooms.invite.items():
            await self._on_invite(room_id, info.invite_state)
        for room_id, info in response.rooms.join.items():
            events = list(info.timeline.events)
            late = not self._synced  # the first batch after a start: it came while we were away
            if info.timeline.limited and since and info.timeline.prev_batch:
                events = await self._backfill(room_id, info.timeline.prev_batch, since) + events
                late = True
            for event in self._after_own_join(events):
                await self._handle(room_id, event, late=late)
        await self._read_held(first=not self._synced, to_device=response.to_device_events)
        self._synced = True
        # Only now: every event of this batch has been handled.
        await self.store.set_value(f"{self._key}:next_batch", response.next_batch)
        await self._set_online(True)
        async with self._sync_done:
            self._sync_done.notify_all()

    def _after_own_join(self, events: list[Event]) -> list[Event]:
        assert self.client is not None
        kept = wire.after_own_join([e.source for e in events], self.client.user_id)
        return events[len(events) - len(kept) :]

    async def _read_held(self, *, first: bool, to_device: list[Any]) -> None:
        """Messages that waited for their room key: handled now if the key came."""
        crypto = self.crypto
        if crypto is None or not (first or crypto.keys_arrived(to_device)):
            return
        if not await crypto.has_held():
            return
        for room_id, event in await crypto.readable_now():
            log.info("the key for %s came; handling it now", event.event_id)
            await self._handle(room_id, event, late=True)
            await crypto.release(event.event_id)

    async def _backfill(self, room_id: str, start: str, until: str) -> list[Event]:
        """Events the sync left out between our last token and this batch (oldest first)."""
        assert self.client is not None
        older: list[Event] = []
        token: str | None = start
        while token and len(older) < 5000:
            resp = await self.client.room_messages(
                room_id, start=token, end=until, direction=MessageDirection.back, limit=100
            )
            if isinstance(resp, RoomMessagesError) or not resp.chunk:
                break
            older.extend(resp.chunk)
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
        if invite is not None and (invite.content or {}).get("is_direct"):
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

    async def _handle(self, room_id: str, event: Event, *, late: bool = False) -> None:
        """One timeline event; `late` when it came while we were away (it gets its time)."""
        assert self.client is not None
        source = event.source
        if isinstance(event, MegolmEvent):
            await self._unreadable(room_id, event, late=late)
            return
        result = wire.parse_event(
            source,
            room_id=room_id,
            own_user_id=self.client.user_id,
            is_direct=await self._is_direct(room_id),
            # getattr: nio marks only events it decrypted; one in clear has no such attribute
            encrypted=bool(getattr(event, "decrypted", False)),
            fetcher=self._fetcher,
        )
        if isinstance(result, wire.Dropped):
            self.dropped[result.reason] += 1
            return
        device = None
        if self.crypto is not None and not isinstance(result, wire.Redaction):
            device = await self.crypto.sender_device(room_id, event)
        event_id = source["event_id"]
        sender = Identity(self.name, source["sender"])
        state = self._state_for(self.store, sender)
        if not await state.mark_processed(self.name, event_id):
            self.dropped["duplicate"] += 1
            return
        stamp = source.get("origin_server_ts")
        envelope = Envelope(
            chat=Room(self.name, room_id),
            sender=sender,
            message_id=event_id,
            is_direct=await self._is_direct(room_id),
            sender_name=source["sender"],
            at=stamp / 1000 if late and isinstance(stamp, int | float) else None,
            device=device,
        )
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
                    envelope=envelope, target_id=result.target_id, added=frozenset({result.key})
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
                    envelope=envelope,
                    target_id=reaction["target"],
                    removed=frozenset({reaction["key"]}),
                )
            )
        else:
            # The wire's envelope knows neither the time of a late event nor the device.
            await self._emit(dataclasses.replace(result, envelope=envelope))

    async def _unreadable(self, room_id: str, event: MegolmEvent, *, late: bool) -> None:
        """An encrypted message whose key we lack: hold it, ask for the key, say so once."""
        assert self.client is not None
        if self.crypto is None or event.sender == self.client.user_id:
            self.dropped["encrypted-unreadable"] += 1
            return
        if not await self.crypto.hold(room_id, event):
            self.dropped["unreadable-again"] += 1
            return
        log.warning("cannot read %s from %s in %s yet", event.event_id, event.sender, room_id)
        stamp = event.server_timestamp
        await self._emit(
            IncomingUnreadable(
                envelope=Envelope(
                    chat=Room(self.name, room_id),
                    sender=Identity(self.name, event.sender),
                    message_id=f"unreadable:{event.event_id}",
                    is_direct=await self._is_direct(room_id),
                    sender_name=event.sender,
                    at=stamp / 1000 if late and stamp else None,
                ),
                target_id=event.event_id,
            )
        )
