"""The bot's side of SAS (emoji) device verification, over to-device messages.

nio runs the SAS state machine (start, accept, key, MAC) but stops short of what
a client such as Element does around it: it does not answer an
`m.key.verification.request` with `.ready`, never sends `.done`, and leaves
accepting and confirming to the application. This module does those steps, for
owners' devices only; anyone else's verification is cancelled.

The bot has no eyes: it cannot compare the emoji itself. It shows them to the
owner (a direct message) and confirms its side; the owner compares what their
client shows with what the bot said and confirms or cancels there. The device
counts as verified for the bot once both MACs are in.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from nio import (
    AsyncClient,
    KeyVerificationCancel,
    KeyVerificationKey,
    KeyVerificationMac,
    KeyVerificationStart,
    LocalProtocolError,
    ToDeviceError,
    UnknownToDeviceEvent,
)
from nio.event_builders import ToDeviceMessage

from ..base import Envelope, Identity, IncomingVerification
from . import TRANSPORT

log = logging.getLogger(__name__)

SAS_V1 = "m.sas.v1"
Announce = Callable[[IncomingVerification], Awaitable[None]]
FindDevice = Callable[[str, str], Awaitable[object]]


class Verifier:
    def __init__(
        self,
        client: AsyncClient,
        owners: frozenset[str],
        announce: Announce,
        find_device: FindDevice,
        transport: str = TRANSPORT,
    ) -> None:
        self.client = client
        self.owners = owners
        self.announce = announce
        self.find_device = find_device
        self.transport = transport
        self._done: set[str] = set()

    async def handle(self, event: object) -> None:
        try:
            await self._handle(event)
        except Exception:  # noqa: BLE001 - one broken verification must not stop the sync
            log.exception("key verification step failed")

    async def _handle(self, event: object) -> None:
        if isinstance(event, UnknownToDeviceEvent):
            if event.type == "m.key.verification.request":
                await self._request(event)
            return
        if isinstance(event, KeyVerificationStart):
            await self._start(event)
        elif isinstance(event, KeyVerificationKey):
            await self._key(event)
        elif isinstance(event, KeyVerificationMac):
            await self._mac(event)
        elif isinstance(event, KeyVerificationCancel):
            log.info(
                "%s cancelled verification %s: %s", event.sender, event.transaction_id, event.reason
            )
            if event.sender in self.owners:
                await self._tell(event.sender, "", "cancelled", detail=event.reason)

    async def _send(
        self, etype: str, user_id: str, device_id: str, content: dict[str, Any]
    ) -> None:
        resp = await self.client.to_device(ToDeviceMessage(etype, user_id, device_id, content))
        if isinstance(resp, ToDeviceError):
            log.warning("could not send %s to %s %s: %s", etype, user_id, device_id, resp)

    async def _request(self, event: UnknownToDeviceEvent) -> None:
        content = event.source.get("content") or {}
        device_id, txn = content.get("from_device"), content.get("transaction_id")
        if not isinstance(device_id, str) or not isinstance(txn, str):
            return
        if event.sender not in self.owners or SAS_V1 not in (content.get("methods") or []):
            log.info("declining a verification request from %s %s", event.sender, device_id)
            await self._send(
                "m.key.verification.cancel",
                event.sender,
                device_id,
                {"transaction_id": txn, "code": "m.user", "reason": "Only owners verify"},
            )
            return
        log.info("verification request from %s %s (%s): ready", event.sender, device_id, txn)
        await self._send(
            "m.key.verification.ready",
            event.sender,
            device_id,
            {"from_device": self.client.device_id, "methods": [SAS_V1], "transaction_id": txn},
        )

    async def _start(self, event: KeyVerificationStart) -> None:
        txn = event.transaction_id
        if event.sender not in self.owners:
            log.info("cancelling verification %s started by %s (no owner)", txn, event.sender)
            if txn in self.client.key_verifications:
                await self.client.cancel_key_verification(txn, reject=True)
            return
        if txn not in self.client.key_verifications:
            # nio drops a start from a device it has no keys for: fetch them, replay it.
            if await self.find_device(event.sender, event.from_device) is None:
                log.warning("verification from unknown device %s %s", event.sender, txn)
                return
            assert self.client.olm is not None
            self.client.olm.handle_key_verification(event)
        sas = self.client.key_verifications.get(txn)
        if sas is None or sas.canceled:
            return
        log.info("accepting verification %s from %s %s", txn, event.sender, event.from_device)
        await self.client.accept_key_verification(txn)

    async def _key(self, event: KeyVerificationKey) -> None:
        sas = self.client.key_verifications.get(event.transaction_id)
        if sas is None or sas.canceled or event.sender not in self.owners:
            return
        # nio queued our own key in answer; it must be out before our MAC.
        await self.client.send_to_device_messages()
        emoji = tuple(f"{symbol} {name}" for symbol, name in sas.get_emoji())
        device_id = sas.other_olm_device.id
        log.info(
            "verification %s with %s %s: emoji %s",
            event.transaction_id,
            event.sender,
            device_id,
            " ".join(emoji),
        )
        await self._tell(event.sender, device_id, "compare", emoji=emoji)
        try:
            await self.client.confirm_short_auth_string(event.transaction_id)
        except LocalProtocolError as exc:
            log.warning("could not confirm verification %s: %s", event.transaction_id, exc)
            return
        await self._finish(sas)

    async def _mac(self, event: KeyVerificationMac) -> None:
        sas = self.client.key_verifications.get(event.transaction_id)
        if sas is not None and event.sender in self.owners:
            await self._finish(sas)

    async def _finish(self, sas: Any) -> None:  # nio's Sas (nio has no type information)
        if not sas.verified or sas.transaction_id in self._done:
            return
        self._done.add(sas.transaction_id)
        device = sas.other_olm_device
        # nio marks the device verified when both MACs are in; make sure the store says so.
        self.client.verify_device(device)
        await self._send(
            "m.key.verification.done",
            device.user_id,
            device.id,
            {"transaction_id": sas.transaction_id},
        )
        log.info("device %s of %s verified by SAS", device.id, device.user_id)
        await self._tell(device.user_id, device.id, "done")

    async def _tell(
        self,
        user_id: str,
        device_id: str,
        state: str,
        *,
        emoji: Iterable[str] = (),
        detail: str = "",
    ) -> None:
        who = Identity(self.transport, user_id)
        await self.announce(
            IncomingVerification(
                envelope=Envelope(
                    chat=who,
                    sender=who,
                    message_id=f"verification:{user_id}:{device_id}:{state}",
                    is_direct=True,
                    sender_name=user_id,
                ),
                device_id=device_id,
                state=state,
                emoji=tuple(emoji),
                detail=detail,
            )
        )
