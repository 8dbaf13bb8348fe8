"""The Matrix transport's outgoing side: where a target is, and one send per message.

A room alias is resolved once; a person gets the direct chat we already have
with them, or a new one (encrypted from its first event when E2EE is on). A
message keeps its transaction id across retries, so the server posts it once
even when a crash came between sending and recording (encrypted or not: the
server deduplicates by device and transaction id, not by content).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from nio import (
    AsyncClient,
    ErrorResponse,
    RoomCreateError,
    RoomPreset,
    RoomResolveAliasResponse,
    RoomSendError,
    RoomSendResponse,
)
from nio.api import Api

from ..base import (
    NotConnected,
    Outgoing,
    Room,
    StateStore,
    Target,
    TargetUnavailable,
    TransportError,
)
from . import events as wire
from .crypto import MatrixCrypto, wait_for
from .session import MatrixSettings

log = logging.getLogger(__name__)

MEGOLM = "m.megolm.v1.aes-sha2"


class MatrixOutgoing:
    """Mixed into MatrixTransport: the attributes below are the transport's."""

    settings: MatrixSettings
    store: StateStore
    client: AsyncClient | None
    crypto: MatrixCrypto | None
    room_ids: dict[str, str]
    _key: str
    _sync_done: asyncio.Condition

    async def _mark_direct(self, room_id: str, user_id: str) -> None:
        raise NotImplementedError

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
        # With E2EE the direct chat is encrypted from its first event, as clients make them.
        encryption = [
            {"type": "m.room.encryption", "state_key": "", "content": {"algorithm": MEGOLM}}
        ]
        resp = await self.client.room_create(
            is_direct=True,
            invite=[target.id],
            preset=RoomPreset.trusted_private_chat,
            initial_state=encryption if self.settings.encrypted else (),
        )
        if isinstance(resp, RoomCreateError):
            raise TargetUnavailable(f"could not open a direct chat with {target.id}: {resp}")
        await self._mark_direct(resp.room_id, target.id)
        if self.crypto is not None and self.crypto.active:
            # The room key goes to the members our sync knows of; the invite may come a
            # sync after the room itself, and a message sent before would be unreadable.
            client = self.client
            room_id = resp.room_id
            await wait_for(
                self._sync_done,
                lambda: room_id in client.rooms and target.id in client.rooms[room_id].users,
                self.settings.send_timeout,
            )
        room: str = resp.room_id
        return room

    async def _room_send(
        self, room_id: str, etype: str, content: dict[str, Any], txn_id: str
    ) -> str:
        if self.client is None or not self.client.access_token:
            raise NotConnected("Matrix is not logged in")
        try:
            resp = await asyncio.wait_for(
                self._put(room_id, etype, content, txn_id), self.settings.send_timeout
            )
        except OSError as exc:
            raise NotConnected(f"Matrix send to {room_id} failed: {exc!r}") from exc
        except TimeoutError as exc:
            raise TransportError(f"Matrix send to {room_id} timed out") from exc
        except TransportError:
            raise
        except Exception as exc:  # noqa: BLE001 - nio's crypto errors: this try failed, retry
            raise TransportError(f"Matrix send to {room_id} failed: {exc!r}") from exc
        if isinstance(resp, RoomSendError | ErrorResponse):
            # Not allowed there (kicked, no power): the room's fault, not this message's.
            forbidden = resp.status_code in ("M_FORBIDDEN", "M_NOT_FOUND")
            kind = TargetUnavailable if forbidden else TransportError
            raise kind(f"Matrix send to {room_id} refused: {resp}")
        event_id: str = resp.event_id
        return event_id

    async def _put(self, room_id: str, etype: str, content: dict[str, Any], txn_id: str) -> Any:
        """One PUT /send; encrypted first where the room is (the txn id stays the same,
        so a re-send after a crash is still deduplicated by the server)."""
        assert self.client is not None
        crypto = self.crypto
        if crypto is not None and crypto.active:
            client = self.client
            if room_id not in client.rooms and not await wait_for(
                self._sync_done, lambda: room_id in client.rooms, self.settings.send_timeout
            ):
                # Unknown to the sync: we cannot tell if it is encrypted, so send nothing.
                raise TargetUnavailable(f"Matrix room {room_id} is not (yet) joined")
            etype, content = await crypto.wire(room_id, etype, content)
        token = self.client.access_token
        method, path, data = Api.room_send(token, room_id, etype, content, txn_id)
        # nio's room_send would leave reactions in clear; its request loop (429s) we keep.
        return await self.client._send(RoomSendResponse, method, path, data, (room_id,))

    async def _send_text(self, message: Outgoing) -> str:
        """Post an m.notice (an m.text that rings the phones of `mentions`), or an edit
        of one; the same txn_id again (after a crash) posts it once. Encrypted rooms
        get it encrypted, edits too."""
        room_id = await self._room_for(message.target)
        text, html = message.text, message.html
        if message.replaces is not None:
            content = wire.edit_content(message.replaces.message_id, text, html)
        else:
            content = wire.notice_content(
                text, html, reply_to=message.reply_to, mentions=message.mentions
            )
        if wire.fit_content(content):
            log.warning("message to %s cut to %d bytes", room_id, wire.MAX_CONTENT_BYTES)
        txn_id = message.txn_id or uuid.uuid4().hex
        return await self._room_send(room_id, "m.room.message", content, txn_id)

    async def react(self, target: Target, message_id: str, key: str) -> str | None:
        room_id = await self._room_for(target)
        return await self._room_send(
            room_id,
            "m.reaction",
            wire.reaction_content(message_id, key),
            wire.reaction_txn_id(room_id, message_id, key),
        )
