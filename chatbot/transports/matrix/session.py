"""Matrix settings, the nio client and logging in (with or without end-to-end encryption).

Apart from the transport so that `chatbot check` logs in exactly as the bot does.
A device's encryption keys live in the crypto store; a login may only reuse a
device whose keys are there, or the server would be handed new keys for an old
device and the owners' clients would stop trusting it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from nio import AsyncClient, AsyncClientConfig, LoginResponse, WhoamiResponse
from nio.responses import KeysQueryError, KeysQueryResponse

from ..base import StateStore, TransportError, redacting_repr
from .store_key import DEFAULT_KEY, rekey_stores

log = logging.getLogger(__name__)

TRUST_MODES = ("tofu", "verified")


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
    #: Folder of nio's crypto store (Olm account, sessions, device trust); None: no E2EE.
    crypto_store: str | None = None
    #: "tofu": an owner's devices count as first seen; "verified": only verified devices.
    trust: str = "tofu"
    #: The passphrase the crypto store is pickled with (`store_key_file`); None: nio's default.
    pickle_key: str | None = None

    def __post_init__(self) -> None:
        if self.trust not in TRUST_MODES:
            raise ValueError(f"trust must be one of {TRUST_MODES}, not {self.trust!r}")

    @property
    def encrypted(self) -> bool:
        return self.crypto_store is not None

    def __repr__(self) -> str:
        return redacting_repr(self, ("password", "access_token", "pickle_key"))


def crypto_store_file(settings: MatrixSettings, device_id: str) -> Path | None:
    """Where nio keeps this device's keys (its DefaultStore naming), or None without E2EE."""
    if settings.crypto_store is None:
        return None
    return Path(settings.crypto_store) / f"{settings.user_id}_{device_id}.db"


class MatrixClient(AsyncClient):  # type: ignore[misc]  # nio has no type information: AsyncClient is Any
    """nio's client, with a key query that was made already being no error.

    nio's sync loop schedules a key query beside its long poll when a device list
    changed; the bot queries keys itself before it shares a room key with someone who
    just joined (crypto.py). The second of the two then finds nothing left to ask,
    and nio raises, which would end the loop's round: the transport offline for a
    back-off and the batch synced again, for nothing.
    """

    async def keys_query(self) -> KeysQueryResponse | KeysQueryError:
        if not self.should_query_keys:
            return KeysQueryError("no key query required: another task made it")
        return await super().keys_query()


def make_client(settings: MatrixSettings, *, encryption: bool | None = None) -> AsyncClient:
    """A nio client; with E2EE its store folder is created (owner-only) on first use."""
    crypto = settings.encrypted if encryption is None else encryption
    config = AsyncClientConfig(
        max_limit_exceeded=None,  # wait out every 429, as often as it comes
        max_timeouts=settings.request_retries,
        backoff_factor=0.1,
        max_timeout_retry_wait_time=settings.reconnect_max,
        request_timeout=settings.sync_timeout_ms / 1000 + 15,
        encryption_enabled=crypto,
        # Our own table keeps the sync token, saved only after a batch was handled.
        store_sync_tokens=False,
        pickle_key=settings.pickle_key or DEFAULT_KEY,
    )
    store_path = ""
    if crypto:
        assert settings.crypto_store is not None
        store_path = settings.crypto_store
        # The store holds private keys: nobody else on the machine may read it.
        os.makedirs(store_path, mode=0o700, exist_ok=True)
    return MatrixClient(settings.homeserver, settings.user_id, store_path=store_path, config=config)


def _forget_device(client: AsyncClient) -> None:
    # nio loads a store once; a new device needs its own, so drop the old one.
    client.access_token = ""
    client.store = None
    client.olm = None


async def login(
    client: AsyncClient,
    settings: MatrixSettings,
    store: StateStore | None,
    *,
    keep_device: bool = False,
) -> None:
    """Token from settings, else device+token from the store, else a password login.

    A stored device without keys in the crypto store is replaced by a new one,
    unless `keep_device` (`chatbot check` only looks, it changes no device).
    """
    uid = settings.user_id
    if settings.crypto_store is not None and settings.pickle_key and not keep_device:
        # Before nio opens a store: it would fail on one still on its default passphrase.
        await asyncio.to_thread(rekey_stores, settings.crypto_store, uid, settings.pickle_key)
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
        keys = crypto_store_file(settings, device) if device else None
        if device and token and keys is not None and not keys.exists() and not keep_device:
            log.warning(
                "no crypto store for Matrix device %s at %s; logging in as a new device",
                device,
                keys.parent,
            )
            client.access_token = token
            with contextlib.suppress(Exception):
                await client.logout()  # the old device would linger keyless otherwise
            _forget_device(client)
        elif device and token:
            client.restore_login(uid, device, token)
            who = await client.whoami()
            if isinstance(who, WhoamiResponse):
                return
            log.warning("stored Matrix token for %s no longer works; logging in again", uid)
            _forget_device(client)
    if not settings.password:
        raise TransportError(f"no Matrix password or access token for {uid}")
    resp = await client.login(settings.password, device_name=settings.device_name)
    if not isinstance(resp, LoginResponse):
        raise TransportError(f"Matrix login as {uid} failed: {resp}")
    if store is not None:
        await store.set_value(f"matrix:{uid}:device_id", resp.device_id)
        await store.set_value(f"matrix:{uid}:access_token", resp.access_token)
