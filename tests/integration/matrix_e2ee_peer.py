"""A real matrix-nio client with end-to-end encryption, playing the owner (or a stranger).

Like MatrixPeer, but with its own crypto store: it uploads device keys, decrypts
what it receives (each inbox event says whether it came encrypted), encrypts
what it sends into an encrypted room, and can run SAS verification with the
bot's device. Everything is awaited on sync or key-query answers, never slept.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import vodozemac
from nio import (
    AsyncClient,
    AsyncClientConfig,
    KeysQueryResponse,
    KeyVerificationKey,
    KeyVerificationMac,
    LoginResponse,
    MegolmEvent,
    RoomCreateResponse,
    RoomKeyRequest,
    RoomPreset,
    RoomSendResponse,
    SyncResponse,
    ToDeviceMessage,
    UnknownToDeviceEvent,
)
from nio.api import Api
from nio.exceptions import EncryptionError

from tests.integration.matrix_peer import (
    Syncing,
    fetch_file,
    media_content,
    stop_client,
    take_matching,
    upload,
)
from tests.matrix_signing import cross_signing_key, public, sign

# A bound, not a delay (issue 39): generous for a loaded box.
TIMEOUT = 30
MEGOLM = "m.megolm.v1.aes-sha2"
ENCRYPTION_STATE = {"type": "m.room.encryption", "state_key": "", "content": {"algorithm": MEGOLM}}


class E2eePeer:
    def __init__(self, homeserver: str, user_id: str, password: str, store: Path) -> None:
        store.mkdir(parents=True, exist_ok=True)
        config = AsyncClientConfig(encryption_enabled=True, store_sync_tokens=False)
        self.client = AsyncClient(homeserver, user_id, store_path=str(store), config=config)
        self.password = password
        self.inbox: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self.taken: list[str] = []
        self.invites: asyncio.Queue[str] = asyncio.Queue()
        self.key_requests: asyncio.Queue[RoomKeyRequest] = asyncio.Queue()
        self.verification: asyncio.Queue[Any] = asyncio.Queue()
        self._changed = asyncio.Condition()
        self._waiting: list[MegolmEvent] = []
        self._task: asyncio.Task | None = None

    @property
    def user_id(self) -> str:
        return self.client.user_id

    @property
    def device_id(self) -> str:
        return self.client.device_id

    async def start(self) -> E2eePeer:
        resp = await self.client.login(self.password, device_name="test e2ee peer")
        assert isinstance(resp, LoginResponse), resp
        await self.client.keys_upload()
        first = await self.client.sync(timeout=0, sync_filter={"room": {"timeline": {"limit": 0}}})
        assert isinstance(first, SyncResponse), first
        self.client.add_response_callback(self._on_sync, SyncResponse)
        self.client.add_response_callback(self._on_keys, KeysQueryResponse)
        self.syncing = Syncing(self.client)
        self._task = self.syncing.start()
        return self

    async def stop(self) -> None:
        await stop_client(self.client, self._task)

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _on_keys(self, _response: KeysQueryResponse) -> None:
        await self._notify()

    async def _on_sync(self, response: SyncResponse) -> None:
        for event in response.to_device_events:
            if isinstance(event, RoomKeyRequest):
                self.key_requests.put_nowait(event)
            elif isinstance(event, KeyVerificationKey | KeyVerificationMac | UnknownToDeviceEvent):
                self.verification.put_nowait(event)
            elif type(event).__name__.startswith("KeyVerification"):
                self.verification.put_nowait(event)
        for room_id in response.rooms.invite:
            self.invites.put_nowait(room_id)
        for room_id, info in response.rooms.join.items():
            for event in info.timeline.events:
                if isinstance(event, MegolmEvent):
                    # Its key may come in a later sync, as clients see it: try again then.
                    event.room_id = room_id
                    self._waiting.append(event)
                else:
                    self._put(room_id, event)
        for event in list(self._waiting):
            try:
                decrypted = self.client.decrypt_event(event)
            except EncryptionError:
                continue
            self._waiting.remove(event)
            self._put(event.room_id, decrypted)
        await self._notify()

    def _put(self, room_id: str, event: Any) -> None:
        source = dict(event.source)
        # What the tests assert on: did this reach us encrypted?
        source["_decrypted"] = bool(getattr(event, "decrypted", False))
        self.inbox.put_nowait((room_id, source))

    async def until(self, check: Callable[[], bool], within: float = TIMEOUT) -> None:
        """Await a condition on this client's state, re-checked after every sync or key query."""
        async with asyncio.timeout(within):
            async with self._changed:
                await self._changed.wait_for(check)

    # -- rooms -------------------------------------------------------------------

    async def create_encrypted_room(self, invite: tuple[str, ...] = ()) -> str:
        resp = await self.client.room_create(
            invite=list(invite),
            preset=RoomPreset.private_chat,
            initial_state=[ENCRYPTION_STATE],
        )
        assert isinstance(resp, RoomCreateResponse), resp
        await self.until(lambda: resp.room_id in self.client.rooms)
        return resp.room_id

    async def join(self, room_id: str) -> str:
        resp = await self.client.join(room_id)
        assert hasattr(resp, "room_id"), resp
        await self.until(lambda: room_id in self.client.rooms)
        return room_id

    async def devices_of(
        self, user_id: str, device_id: str | None = None, within: float = TIMEOUT
    ) -> list[Any]:
        """The user's devices with keys, asking the server until it lists one (that one)."""

        def known() -> bool:
            ids = {d.id for d in self.client.device_store.active_user_devices(user_id)}
            return device_id in ids if device_id else bool(ids)

        async with asyncio.timeout(within):
            while not known():
                self.client.olm.users_for_key_query.add(user_id)
                with contextlib.suppress(Exception):  # the sync loop may be asking right now
                    await self.client.keys_query()
                if not known():
                    # The device's keys are not on the server yet: a device-list change
                    # comes with a sync, and nio (or this loop) asks again.
                    await self.until(
                        lambda: known() or user_id in self.client.olm.users_for_key_query,
                        within=within,  # the caller's bound (the outer timeout), not 10 s
                    )
        devices = list(self.client.device_store.active_user_devices(user_id))
        return [d for d in devices if d.id == device_id] if device_id else devices

    async def send(
        self, room_id: str, content: dict[str, Any], etype: str = "m.room.message"
    ) -> str:
        resp = await self.client.room_send(
            room_id, etype, content, tx_id=uuid.uuid4().hex, ignore_unverified_devices=True
        )
        assert isinstance(resp, RoomSendResponse), resp
        return resp.event_id

    async def say(self, room_id: str, text: str) -> str:
        return await self.send(room_id, {"msgtype": "m.text", "body": text})

    async def reply(self, room_id: str, text: str, target: str) -> str:
        return await self.send(
            room_id,
            {
                "msgtype": "m.text",
                "body": f"> <@someone:localhost> quoted\n\n{text}",
                "m.relates_to": {"m.in_reply_to": {"event_id": target}},
            },
        )

    async def send_file(
        self,
        room_id: str,
        data: bytes,
        *,
        name: str,
        mimetype: str,
        msgtype: str = "m.file",
        caption: str | None = None,
        reply_to: str | None = None,
        size: int | None = None,
        hash_of: bytes | None = None,
    ) -> str:
        """An encrypted attachment in an encrypted event, as Element sends one.

        `size` announces another size than the real one (a lying client); `hash_of`
        announces the SHA-256 of other bytes than those uploaded (a tampered file)."""
        url, keys = await upload(self.client, data, name=name, mimetype=mimetype, encrypt=True)
        assert keys is not None
        if hash_of is not None:
            digest = hashlib.sha256(hash_of).digest()
            keys["hashes"] = {"sha256": base64.b64encode(digest).decode().rstrip("=")}
        content = media_content(
            msgtype,
            url,
            name=name,
            mimetype=mimetype,
            size=len(data) if size is None else size,
            keys=keys,
            caption=caption,
            reply_to=reply_to,
        )
        return await self.send(room_id, content)

    async def fetch_file(self, content: dict[str, Any]) -> bytes:
        return await fetch_file(self.client, content)

    async def react(self, room_id: str, target: str, key: str) -> str:
        content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": target, "key": key}}
        # nio sends reactions in clear; an Element user's reaction in an encrypted
        # room comes encrypted, so encrypt it the way such a client does.
        # (room_send would encrypt "m.room.encrypted" once more, so PUT it as it is).
        etype, encrypted = self.client.encrypt(room_id, "m.reaction", content)
        method, path, data = Api.room_send(
            self.client.access_token, room_id, etype, encrypted, uuid.uuid4().hex
        )
        resp = await self.client._send(RoomSendResponse, method, path, data, (room_id,))
        assert isinstance(resp, RoomSendResponse), resp
        return resp.event_id

    async def expect(
        self, pred: Callable[[str, dict[str, Any]], bool], *, within: float = TIMEOUT
    ) -> tuple[str, dict[str, Any]]:
        return await take_matching(
            self.inbox,
            pred,
            within,
            self.user_id,
            also=lambda: (
                f"; {len(self._waiting)} encrypted events still without their room key"
                + self.syncing.state()
            ),
            taken=self.taken,
        )

    # -- keys ----------------------------------------------------------------------

    async def withhold_from(self, room_id: str, device: Any) -> dict[str, Any]:
        """Start a new room session that `device` does not get; return its key (index 0).

        The device is blacklisted, so nio shares the new session with everyone
        else; the returned key lets the test hand it over later, as the sender's
        own device would answer a key request.
        """
        self.client.blacklist_device(device)
        await self.client.share_group_session(room_id, ignore_unverified_devices=True)
        session = self.client.olm.outbound_group_sessions[room_id]
        return {
            "algorithm": MEGOLM,
            "room_id": room_id,
            "session_id": session.id,
            "session_key": session.session_key,
        }

    async def hand_over(self, key: dict[str, Any], device: Any) -> None:
        """Send a room key to one device over our Olm session with it (m.room_key)."""
        olm = self.client.olm
        session = olm.session_store.get(device.curve25519)
        assert session is not None, "no Olm session with that device"
        content = olm._olm_encrypt(session, device, "m.room_key", key)
        message = ToDeviceMessage("m.room.encrypted", device.user_id, device.id, content)
        await self.client.to_device(message)

    # -- cross-signing ----------------------------------------------------------------

    async def _api(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict]:
        resp = await self.client.send(
            method,
            path,
            json.dumps(body),
            headers={
                "Authorization": f"Bearer {self.client.access_token}",
                "Content-Type": "application/json",
            },
        )
        try:
            return resp.status, await resp.json()
        finally:
            resp.release()

    async def cross_sign_own_device(self) -> str:
        """Set up cross-signing keys (as Element does) and sign this device; the master key."""
        uid = self.user_id
        master, ssk = vodozemac.Account(), vodozemac.Account()
        body = {
            "master_key": cross_signing_key(uid, "master", master),
            "self_signing_key": sign(cross_signing_key(uid, "self_signing", ssk), uid, master),
        }
        path = "/_matrix/client/v3/keys/device_signing/upload"
        status, answer = await self._api("POST", path, body)
        if status == 401:  # user-interactive auth: the password again
            body["auth"] = {
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": uid},
                "password": self.password,
                "session": answer.get("session"),
            }
            status, answer = await self._api("POST", path, body)
        assert status == 200, answer
        status, keys = await self._api(
            "POST", "/_matrix/client/v3/keys/query", {"device_keys": {uid: [self.device_id]}}
        )
        assert status == 200, keys
        device = keys["device_keys"][uid][self.device_id]
        device.pop("unsigned", None)
        sign(device, uid, ssk)
        status, answer = await self._api(
            "POST", "/_matrix/client/v3/keys/signatures/upload", {uid: {self.device_id: device}}
        )
        assert status == 200 and not answer.get("failures"), answer
        return public(master)

    # -- SAS -----------------------------------------------------------------------

    async def verification_event(self, kind: type, within: float = TIMEOUT) -> Any:
        async with asyncio.timeout(within):
            while True:
                event = await self.verification.get()
                if isinstance(event, kind):
                    return event
