"""The cross-signing chain check (master -> self-signing key -> device), without a server."""

from __future__ import annotations

import copy

import vodozemac

from chatbot.transports.matrix.cross_signing import verify
from tests.matrix_signing import cross_signing_key, public, sign

USER = "@owner:example.org"


def keys_answer() -> tuple[dict, str, str]:
    """A /keys/query answer with one cross-signed device; (answer, master, device ed25519)."""
    master, ssk, device = vodozemac.Account(), vodozemac.Account(), vodozemac.Account()
    device_keys = {
        "user_id": USER,
        "device_id": "PHONE",
        "algorithms": ["m.olm.v1.curve25519-aes-sha2", "m.megolm.v1.aes-sha2"],
        "keys": {"ed25519:PHONE": public(device), "curve25519:PHONE": "c"},
    }
    sign(device_keys, USER, device, "ed25519:PHONE")
    sign(device_keys, USER, ssk)
    answer = {
        "device_keys": {USER: {"PHONE": device_keys}},
        "master_keys": {USER: cross_signing_key(USER, "master", master)},
        "self_signing_keys": {
            USER: sign(cross_signing_key(USER, "self_signing", ssk), USER, master)
        },
    }
    return answer, public(master), public(device)


def test_a_device_signed_by_the_self_signing_key_under_the_master_key_is_verified() -> None:
    answer, master, device = keys_answer()
    assert verify(answer, USER, "PHONE", device, master)


def test_another_master_key_than_the_pinned_one_verifies_nothing() -> None:
    answer, _, device = keys_answer()
    assert not verify(answer, USER, "PHONE", device, public(vodozemac.Account()))


def test_a_device_key_other_than_the_one_we_know_is_not_verified() -> None:
    answer, master, _ = keys_answer()
    assert not verify(answer, USER, "PHONE", public(vodozemac.Account()), master)


def test_a_broken_link_in_the_chain_verifies_nothing() -> None:
    answer, master, device = keys_answer()
    unsigned_device = copy.deepcopy(answer)
    signatures = unsigned_device["device_keys"][USER]["PHONE"]["signatures"][USER]
    for key_id in [k for k in signatures if k != "ed25519:PHONE"]:
        del signatures[key_id]
    assert not verify(unsigned_device, USER, "PHONE", device, master)

    forged = copy.deepcopy(answer)
    forged["self_signing_keys"][USER]["keys"] = {"ed25519:x": public(vodozemac.Account())}
    assert not verify(forged, USER, "PHONE", device, master)

    tampered = copy.deepcopy(answer)
    tampered["device_keys"][USER]["PHONE"]["keys"]["curve25519:PHONE"] = "other"
    assert not verify(tampered, USER, "PHONE", device, master)

    garbage = copy.deepcopy(answer)
    garbage["self_signing_keys"][USER]["signatures"][USER] = {f"ed25519:{master}": "!!"}
    assert not verify(garbage, USER, "PHONE", device, master)
    assert not verify({}, USER, "PHONE", device, master)
