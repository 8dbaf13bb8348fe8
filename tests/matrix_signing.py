"""Ed25519 signing of Matrix key objects for tests: stand-ins for a client's cross-signing.

A vodozemac Account is just an ed25519 key pair here (master, self-signing key).
"""

from __future__ import annotations

from typing import Any

import vodozemac
from nio.api import Api


def public(key: vodozemac.Account) -> str:
    return key.ed25519_key.to_base64()


def sign(
    obj: dict[str, Any], user_id: str, key: vodozemac.Account, key_id: str | None = None
) -> dict:
    """Add `key`'s signature of `obj` (canonical JSON without signatures/unsigned)."""
    body = {k: v for k, v in obj.items() if k not in ("signatures", "unsigned")}
    signature = key.sign(Api.to_canonical_json(body).encode()).to_base64()
    obj.setdefault("signatures", {}).setdefault(user_id, {})[key_id or f"ed25519:{public(key)}"] = (
        signature
    )
    return obj


def cross_signing_key(user_id: str, usage: str, key: vodozemac.Account) -> dict[str, Any]:
    return {"user_id": user_id, "usage": [usage], "keys": {f"ed25519:{public(key)}": public(key)}}
