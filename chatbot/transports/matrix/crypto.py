"""End-to-end encryption around matrix-nio's Olm machine (vodozemac).

nio decrypts timeline events while it handles a sync and keeps its keys in the
crypto store. What a bot that takes orders needs on top, kept here so the
transport stays a sync loop:

- which device sent a decrypted event, and whether that device counts under the
  trust mode ("tofu": any device of the sender whose keys nio pinned when it
  first saw them; "verified": only devices verified by SAS or cross-signing);
- messages whose room key has not come: kept (in the transport's store, so a
  restart keeps them), the key requested, and decrypted again when keys arrive;
- encrypting what we post in an encrypted room, reactions included (nio leaves
  those in clear).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from nio import (
    AsyncClient,
    Event,
    ForwardedRoomKeyEvent,
    LocalProtocolError,
    MegolmEvent,
    RoomGetStateEventResponse,
    RoomKeyEvent,
)
from nio.crypto import OlmDevice
from nio.exceptions import EncryptionError
from nio.store import DefaultStore

from ..base import Identity, SenderDevice, StateStore
from . import TRANSPORT
from . import cross_signing as xsign
from .session import MatrixSettings, crypto_store_file
from .store_key import DEFAULT_KEY, KEY_NAME, pickled_with

log = logging.getLogger(__name__)

#: Unreadable messages kept per bot, oldest dropped first.
HELD_LIMIT = 200


class MatrixCrypto:
    def __init__(
        self,
        client: AsyncClient,
        store: StateStore,
        *,
        key: str,
        trust: str,
        counts: Callable[[Identity | None], bool],
    ) -> None:
        self.client = client
        self.store = store
        self.trust = trust
        self._counts = counts
        self._held_key = f"{key}:held"
        self._held: list[dict[str, Any]] | None = None
        self.cross_signing = xsign.CrossSigning(client, store, key=key)

    @property
    def active(self) -> bool:
        return self.client.olm is not None

    def room_encrypted(self, room_id: str) -> bool:
        room = self.client.rooms.get(room_id)
        return bool(room and room.encrypted) or room_id in self.client.encrypted_rooms

    # -- who sent it ------------------------------------------------------------

    async def sender_device(self, room_id: str, event: Event) -> SenderDevice | None:
        """The device facts for a timeline event; None when nothing needs saying."""
        if not self.active:
            return None
        # getattr: nio marks only events it decrypted; one in clear has no such attribute
        if not getattr(event, "decrypted", False):
            # Nothing ties a message in clear to a device; in "verified" mode that is a no.
            return SenderDevice("", False, "unencrypted") if self.trust == "verified" else None
        sender = event.sender
        device = self._device(sender, event.sender_key)
        if device is None:
            # A device we have not asked the server about yet: ask once, then decide.
            assert self.client.olm is not None
            self.client.olm.users_for_key_query.add(sender)
            await self._query_keys()
            device = self._device(sender, event.sender_key)
        if device is None:
            return SenderDevice("", False, "unknown")
        session = self.client.olm.inbound_group_store.get(
            room_id, event.sender_key, event.session_id
        )
        if session is None or session.ed25519 != device.ed25519:
            return SenderDevice(device.id, False, "key_mismatch")
        if device.blacklisted:
            return SenderDevice(device.id, False, "blocked")
        if self.trust == "tofu":
            return SenderDevice(device.id, True)
        if session.forwarding_chain:
            # Another device passed the key on: it cannot vouch for the original sender.
            return SenderDevice(device.id, False, "forwarded")
        if self.client.olm.is_device_verified(device):
            return SenderDevice(device.id, True)
        if await self.cross_signing.signed(device):
            return SenderDevice(device.id, True)
        return SenderDevice(device.id, False, "unverified")

    def _device(self, user_id: str, curve25519: str | None) -> OlmDevice | None:
        if not curve25519:
            return None
        for device in self.client.device_store.active_user_devices(user_id):
            if device.curve25519 == curve25519:
                return device
        return None

    async def _query_keys(self) -> None:
        if self.client.should_query_keys:
            try:
                await self.client.keys_query()
            except LocalProtocolError:
                pass  # another task is asking right now

    async def find_device(self, user_id: str, device_id: str) -> OlmDevice | None:
        device = self.client.device_store[user_id].get(device_id)
        if device is None and self.client.olm is not None:
            self.client.olm.users_for_key_query.add(user_id)
            await self._query_keys()
            device = self.client.device_store[user_id].get(device_id)
        return device

    # -- messages we cannot read (yet) -------------------------------------------

    async def _load_held(self) -> list[dict[str, Any]]:
        if self._held is None:
            raw = await self.store.get_value(self._held_key)
            self._held = json.loads(raw) if raw else []
        return self._held

    async def _save_held(self) -> None:
        await self.store.set_value(self._held_key, json.dumps(self._held or []))

    async def hold(self, room_id: str, event: MegolmEvent) -> bool:
        """Keep an unreadable message and ask for its key.

        True when this is the first message missing that key, i.e. the room should
        be told once; a stranger's messages are not kept (they change nothing).
        """
        if not self._counts(Identity(TRANSPORT, event.sender)):
            return False
        held = await self._load_held()
        if any(h["source"].get("event_id") == event.event_id for h in held):
            return False
        held.append({"room_id": room_id, "source": event.source})
        del held[:-HELD_LIMIT]
        await self._save_held()
        try:
            await self.client.request_room_key(event)
        except LocalProtocolError:
            pass  # asked already (the request is in the crypto store)
        except Exception as exc:  # noqa: BLE001 - the next key or restart tries again
            log.warning("room key request for %s failed: %r", event.event_id, exc)
        return await self.store.mark_processed(
            TRANSPORT, f"unreadable:{room_id}:{event.session_id}"
        )

    async def readable_now(self) -> list[tuple[str, Event]]:
        """Held messages whose keys have come, decrypted, oldest first."""
        held = await self._load_held()
        found = []
        for item in held:
            event = MegolmEvent.from_dict(item["source"])
            if not isinstance(event, MegolmEvent):
                continue
            event.room_id = item["room_id"]
            try:
                decrypted = self.client.decrypt_event(event)
            except EncryptionError:
                continue
            if isinstance(decrypted, Event):
                found.append((item["room_id"], decrypted))
        return found

    async def release(self, event_id: str) -> None:
        """Forget a held message once it has been handled."""
        held = await self._load_held()
        self._held = [h for h in held if h["source"].get("event_id") != event_id]
        await self._save_held()

    @staticmethod
    def keys_arrived(to_device_events: list[Any]) -> bool:
        return any(isinstance(e, RoomKeyEvent | ForwardedRoomKeyEvent) for e in to_device_events)

    async def has_held(self) -> bool:
        return bool(await self._load_held())

    # -- what we post -------------------------------------------------------------

    async def wire(
        self, room_id: str, etype: str, content: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """The (type, content) to send: encrypted for every member's devices in an
        encrypted room (unverified ones too, so that an owner can read why a
        command from such a device was refused), unchanged elsewhere."""
        client = self.client
        room = client.rooms.get(room_id)
        if not self.active or room is None or not room.encrypted:
            return etype, content
        if not room.members_synced:
            await client.joined_members(room_id)
        # Someone who just joined: their devices must be known before the key is shared.
        await self._query_keys()
        assert client.olm is not None
        if client.olm.should_share_group_session(room_id):
            sharing = client.sharing_session.get(room_id)
            if sharing is not None:
                await sharing.wait()
            else:
                await client.share_group_session(room_id, ignore_unverified_devices=True)
        encrypted: tuple[str, dict[str, Any]] = client.encrypt(room_id, etype, content)
        return encrypted


async def room_encryption(
    client: AsyncClient, settings: MatrixSettings, room_id: str
) -> tuple[bool | None, bool | None, str]:
    """For `chatbot check`: (encrypted, can decrypt, why) of one joined room.

    Reads the crypto store without loading it into an Olm machine (the running
    bot owns that), and compares its device key with what the server hands out.
    """
    state = await client.room_get_state_event(room_id, "m.room.encryption")
    if not isinstance(state, RoomGetStateEventResponse):
        # getattr: nio's error responses carry a status code; others have none
        if getattr(state, "status_code", "") == "M_NOT_FOUND":
            return False, None, "not encrypted"
        return None, None, f"encryption unknown: {state}"
    if not settings.encrypted:
        return True, False, "encrypted, but the bot has no crypto store"
    device = client.device_id or ""
    path = crypto_store_file(settings, device)
    if path is None or not path.exists():
        return True, False, f"no keys for device {device} in {settings.crypto_store}: start the bot"
    # Until the bot's next start re-pickles it, a store may still be on nio's passphrase.
    found = pickled_with(path, settings.pickle_key)
    if found == "none":
        return True, False, f"the crypto store does not open with {KEY_NAME}"
    key = settings.pickle_key if found == "key" and settings.pickle_key else DEFAULT_KEY
    store = DefaultStore(settings.user_id, device, settings.crypto_store, key)
    account = store.load_account()
    if account is None:
        return True, False, f"the crypto store has no account for device {device}"
    mine = account.identity_keys["ed25519"]
    answer = await xsign.query_keys(client, settings.user_id) or {}
    device_keys = ((answer.get("device_keys") or {}).get(settings.user_id) or {}).get(device) or {}
    if (device_keys.get("keys") or {}).get(f"ed25519:{device}") != mine:
        return True, False, f"the server does not hand out device {device}'s keys: start the bot"
    room_keys = sum(1 for s in store.load_inbound_group_sessions() if s.room_id == room_id)
    return True, True, f"device {device}, {room_keys} room key(s) held"


async def wait_for(condition: asyncio.Condition, check: Callable[[], bool], within: float) -> bool:
    """Await `check()` under `condition` (notified after each sync); False on timeout."""
    try:
        async with condition:
            await asyncio.wait_for(condition.wait_for(check), within)
        return True
    except TimeoutError:
        return False
