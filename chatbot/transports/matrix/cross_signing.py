"""Cross-signing: is a device signed by its user's self-signing key, under a trusted master key?

nio does not do cross-signing, so the keys come from a plain /keys/query and the
signatures (ed25519 over canonical JSON) are checked here. The chain is
master key -> self-signing key -> device keys. The user's master key is pinned
the first time the bot sees it, as clients pin other users' identities: a
different master key later is not trusted, so whoever takes over the account
cannot cross-sign a device of their own into trust. `verify` is pure.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import vodozemac
from nio import AsyncClient
from nio.api import Api
from nio.crypto import OlmDevice

from ..base import StateStore

log = logging.getLogger(__name__)


def _ed25519(keys: dict[str, Any]) -> str | None:
    """The one ed25519 public key of a cross-signing key object."""
    found = [v for k, v in (keys.get("keys") or {}).items() if k.startswith("ed25519:")]
    return found[0] if len(found) == 1 and isinstance(found[0], str) else None


def signed_by(obj: dict[str, Any], user_id: str, public_key: str, key_id: str) -> bool:
    """Whether `obj` carries a valid signature by `public_key` under `user_id`/`key_id`."""
    try:
        signature = obj["signatures"][user_id][key_id]
        body = {k: v for k, v in obj.items() if k not in ("signatures", "unsigned")}
        vodozemac.Ed25519PublicKey.from_base64(public_key).verify_signature(
            Api.to_canonical_json(body).encode(), vodozemac.Ed25519Signature.from_base64(signature)
        )
        return True
    except (KeyError, TypeError, vodozemac.SignatureException, vodozemac.KeyException):
        return False
    except Exception:  # noqa: BLE001 - a malformed key or signature is just "not signed"
        return False


def verify(
    answer: dict[str, Any], user_id: str, device_id: str, device_ed25519: str, master: str
) -> bool:
    """The device (with the ed25519 key we know it by) is cross-signed under `master`."""
    master_keys = (answer.get("master_keys") or {}).get(user_id) or {}
    ssk = (answer.get("self_signing_keys") or {}).get(user_id) or {}
    device = ((answer.get("device_keys") or {}).get(user_id) or {}).get(device_id) or {}
    if _ed25519(master_keys) != master or "self_signing" not in (ssk.get("usage") or []):
        return False
    ssk_key = _ed25519(ssk)
    if ssk_key is None or not signed_by(ssk, user_id, master, f"ed25519:{master}"):
        return False
    if (device.get("keys") or {}).get(f"ed25519:{device_id}") != device_ed25519:
        return False
    return signed_by(device, user_id, ssk_key, f"ed25519:{ssk_key}")


async def query_keys(client: AsyncClient, user_id: str) -> dict[str, Any] | None:
    """The raw /keys/query answer for one user (nio keeps no cross-signing keys)."""
    resp = await client.send(
        "POST",
        "/_matrix/client/v3/keys/query",
        json.dumps({"device_keys": {user_id: []}}),
        headers={
            "Authorization": f"Bearer {client.access_token}",
            "Content-Type": "application/json",
        },
    )
    try:
        return await resp.json() if resp.status == 200 else None
    finally:
        resp.release()


class CrossSigning:
    def __init__(self, client: AsyncClient, store: StateStore, *, key: str) -> None:
        self.client = client
        self.store = store
        self._key = key

    async def signed(self, device: OlmDevice) -> bool:
        try:
            answer = await query_keys(self.client, device.user_id)
        except Exception as exc:  # noqa: BLE001 - no answer: not proven, say unverified
            log.warning("cross-signing keys of %s not readable: %r", device.user_id, exc)
            return False
        if not answer:
            return False
        master = _ed25519((answer.get("master_keys") or {}).get(device.user_id) or {})
        if master is None:
            return False  # the user has no cross-signing
        pin = f"{self._key}:master_key:{device.user_id}"
        pinned = await self.store.get_value(pin)
        if pinned is None:
            await self.store.set_value(pin, master)
            pinned = master
        elif pinned != master:
            log.warning(
                "the cross-signing master key of %s changed (pinned %s, now %s): not trusted",
                device.user_id,
                pinned,
                master,
            )
            return False
        return verify(answer, device.user_id, device.id, device.ed25519, pinned)
