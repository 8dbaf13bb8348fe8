"""Which device sent a decrypted event, and whether it counts under each trust mode.

A real nio Olm machine (in-memory store) with a device and a room key put in by
hand, as a sync would have; no server. Where the transport would ask the server
(key query, cross-signing keys), the answer is "nothing known".
"""

from __future__ import annotations

import pytest
import vodozemac
from nio import AsyncClient, AsyncClientConfig, RoomMessageText
from nio.crypto import OlmDevice
from nio.crypto.sessions import InboundGroupSession
from nio.store import SqliteMemoryStore

from chatbot.transports.base import MemoryStateStore, SenderDevice
from chatbot.transports.matrix.crypto import MatrixCrypto

ROOM = "!ops:example.org"
OWNER = "@owner:example.org"


class Setup:
    def __init__(self, trust: str) -> None:
        config = AsyncClientConfig(store=SqliteMemoryStore, encryption_enabled=True)
        self.client = AsyncClient("http://127.0.0.1:9", "@bot:example.org", config=config)
        self.client.restore_login("@bot:example.org", "BOTDEVICE", "token")
        self.account = vodozemac.Account()
        self.device = OlmDevice(
            OWNER,
            "PHONE",
            {
                "ed25519": self.account.ed25519_key.to_base64(),
                "curve25519": self.account.curve25519_key.to_base64(),
            },
        )
        self.client.device_store.add(self.device)
        self.client.olm.store.save_device_keys({OWNER: {"PHONE": self.device}})
        self.crypto = MatrixCrypto(
            self.client, MemoryStateStore(), key="matrix:@bot", trust=trust, counts=lambda _: True
        )
        self.asked: list[str] = []

        async def no_answer() -> None:
            self.asked.append("keys")

        async def not_signed(_device: OlmDevice) -> bool:
            self.asked.append("cross-signing")
            return False

        self.crypto._query_keys = no_answer  # type: ignore[method-assign]
        self.crypto.cross_signing.signed = not_signed  # type: ignore[method-assign]

    def message(
        self, *, signing_key: str | None = None, sender_key: str | None = None, chain=None
    ) -> RoomMessageText:
        """A decrypted message whose room key claims `signing_key` (default: the device's)."""
        group = vodozemac.GroupSession()
        sender = sender_key or self.device.curve25519
        session = InboundGroupSession(
            group.session_key.to_base64(),
            signing_key or self.device.ed25519,
            sender,
            ROOM,
            forwarding_chain=chain,
        )
        self.client.olm.inbound_group_store.add(session)
        event = RoomMessageText.from_dict(
            {
                "type": "m.room.message",
                "event_id": "$e",
                "sender": OWNER,
                "origin_server_ts": 1,
                "content": {"msgtype": "m.text", "body": "/status"},
            }
        )
        event.decrypted = True
        event.sender_key = sender
        event.session_id = session.id
        return event


@pytest.mark.parametrize("trust", ["tofu", "verified"])
async def test_what_any_mode_refuses(trust: str) -> None:
    s = Setup(trust)
    other = vodozemac.Account()
    mismatch = s.message(signing_key=other.ed25519_key.to_base64())
    assert await s.crypto.sender_device(ROOM, mismatch) == SenderDevice(
        "PHONE", False, "key_mismatch"
    )
    stranger_key = s.message(sender_key=other.curve25519_key.to_base64())
    assert await s.crypto.sender_device(ROOM, stranger_key) == SenderDevice("", False, "unknown")
    assert "keys" in s.asked  # it asked the server before saying "unknown"
    s.client.blacklist_device(s.device)
    assert await s.crypto.sender_device(ROOM, s.message()) == SenderDevice(
        "PHONE", False, "blocked"
    )


async def test_tofu_takes_any_device_as_first_seen_and_says_nothing_in_clear() -> None:
    s = Setup("tofu")
    assert await s.crypto.sender_device(ROOM, s.message()) == SenderDevice("PHONE", True)
    forwarded = s.message(chain=["someone-else"])
    assert await s.crypto.sender_device(ROOM, forwarded) == SenderDevice("PHONE", True)
    clear = s.message()
    clear.decrypted = False
    assert await s.crypto.sender_device(ROOM, clear) is None


async def test_verified_takes_only_verified_devices() -> None:
    s = Setup("verified")
    assert await s.crypto.sender_device(ROOM, s.message()) == SenderDevice(
        "PHONE", False, "unverified"
    )
    assert "cross-signing" in s.asked
    clear = s.message()
    clear.decrypted = False
    assert await s.crypto.sender_device(ROOM, clear) == SenderDevice("", False, "unencrypted")
    s.client.verify_device(s.device)
    assert await s.crypto.sender_device(ROOM, s.message()) == SenderDevice("PHONE", True)
    forwarded = s.message(chain=["someone-else"])
    assert await s.crypto.sender_device(ROOM, forwarded) == SenderDevice(
        "PHONE", False, "forwarded"
    )
