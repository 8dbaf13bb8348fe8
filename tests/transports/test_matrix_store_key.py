"""The Matrix crypto store's passphrase: a store nio made with its default is re-pickled.

The store is made by a real nio client (its own Olm account, an Olm session with a
peer's device, the room key of its own outbound session and one a peer sent), never
by hand-made bytes; afterwards a nio client with the new key opens it and finds the
same identity and sessions, and nio's default passphrase no longer opens it. A crash
midway through the re-pickle is a real one: the process exits inside the transaction.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import vodozemac
from nio import AsyncClient, AsyncClientConfig
from nio.crypto import Olm
from nio.store import DefaultStore

from chatbot.transports.matrix import store_key
from chatbot.transports.matrix.session import MatrixSettings, login, make_client
from chatbot.transports.matrix.store_key import (
    DEFAULT_IN_USE,
    DEFAULT_KEY,
    KEY_NAME,
    StoreKeyError,
    keys_at_rest,
    pickled_with,
    rekey,
    rekey_stores,
)

USER = "@bot:example.org"
DEVICE = "BOTDEVICE"
ROOM = "!ops:example.org"
KEY = "a passphrase from store_key_file"
ROOT = Path(__file__).resolve().parents[2]


def client(folder: Path, key: str = DEFAULT_KEY) -> AsyncClient:
    """A nio client on the store in `folder`, as the bot makes one (its store loaded)."""
    config = AsyncClientConfig(encryption_enabled=True, store_sync_tokens=False, pickle_key=key)
    made = AsyncClient("http://127.0.0.1:9", USER, store_path=str(folder), config=config)
    made.restore_login(USER, DEVICE, "token")
    return made


def close(made: AsyncClient) -> None:
    made.store.database.close()


class Made:
    """A store nio made with its default passphrase, and what must survive the re-pickle."""

    def __init__(self, folder: Path) -> None:
        bot = client(folder)
        olm: Olm = bot.olm
        self.identity = dict(olm.account.identity_keys)
        # An Olm session with a peer's device, as a key claim would make one.
        peer = vodozemac.Account()
        peer.generate_one_time_keys(1)
        self.peer_curve = peer.curve25519_key.to_base64()
        one_time = next(iter(peer.one_time_keys.values())).to_base64()
        self.olm_session = olm.create_session(one_time, self.peer_curve).id
        # The bot's own room key, and one a peer sent.
        olm.create_outbound_group_session(ROOM)
        sender = vodozemac.GroupSession()
        olm.create_group_session(
            self.peer_curve,
            peer.ed25519_key.to_base64(),
            ROOM,
            sender.session_id,
            sender.session_key.to_base64(),
        )
        self.sender_session = sender.session_id
        self.secret_text = sender.encrypt(b"/status").to_base64()
        self.room_keys = {s.id for s in olm.inbound_group_store}
        close(bot)
        self.path = folder / f"{USER}_{DEVICE}.db"


def opens_with_default(folder: Path) -> bool:
    try:
        DefaultStore(USER, DEVICE, str(folder), DEFAULT_KEY).load_account()
    except ValueError:
        return False
    return True


def test_a_default_store_is_re_pickled_and_keeps_its_identity_and_sessions(
    tmp_path: Path,
) -> None:
    made = Made(tmp_path)
    assert pickled_with(made.path, KEY) == "default"

    rekey_stores(tmp_path, USER, KEY)

    assert pickled_with(made.path, KEY) == "key"
    assert not opens_with_default(tmp_path), "nio's default passphrase still opens the store"
    bot = client(tmp_path, KEY)
    try:
        olm: Olm = bot.olm
        assert olm.account.identity_keys == made.identity
        assert [s.id for s in olm.session_store[made.peer_curve]] == [made.olm_session]
        assert {s.id for s in olm.inbound_group_store} == made.room_keys
        # The peer's room key still decrypts what the peer sent with it.
        room_key = olm.inbound_group_store.get(ROOM, made.peer_curve, made.sender_session)
        assert room_key is not None
        assert room_key.decrypt(made.secret_text)[0] == "/status"
    finally:
        close(bot)
    # Once moved, a second start changes nothing.
    assert rekey(made.path, KEY) == {}


def test_a_store_that_neither_passphrase_opens_is_refused_naming_the_key(tmp_path: Path) -> None:
    made = Made(tmp_path)
    rekey(made.path, KEY)
    before = made.path.read_bytes()
    with pytest.raises(StoreKeyError, match=KEY_NAME):
        rekey(made.path, "another passphrase")
    assert made.path.read_bytes() == before
    assert pickled_with(made.path, "another passphrase") == "none"


CRASH = """
import dataclasses, os, pathlib, sys
from chatbot.transports.matrix import store_key
from chatbot.transports.matrix.session import MatrixSettings, login, make_client

def crash(blob, key):
    os._exit(9)  # no rollback, no close: as if the power went

# The room keys come last: the account and Olm sessions are re-written by then.
last = dataclasses.replace(store_key.PICKLES[-1], load=crash)
store_key.PICKLES = (*store_key.PICKLES[:-1], last)
store_key.rekey(pathlib.Path(sys.argv[1]), sys.argv[2])
"""


def test_a_crash_midway_leaves_a_store_the_default_opens_and_the_next_start_moves(
    tmp_path: Path,
) -> None:
    made = Made(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    crashed = subprocess.run(
        [sys.executable, "-c", CRASH, str(made.path), KEY], env=env, capture_output=True
    )
    assert crashed.returncode == 9, crashed.stderr
    # The account and Olm sessions were re-pickled in the dead transaction: not kept.
    assert opens_with_default(tmp_path)
    bot = client(tmp_path)
    assert bot.olm.account.identity_keys == made.identity
    assert {s.id for s in bot.olm.inbound_group_store} == made.room_keys
    close(bot)

    assert rekey(made.path, KEY) == {"account(s)": 1, "Olm session(s)": 1, "room key(s)": 2}
    bot = client(tmp_path, KEY)
    assert bot.olm.account.identity_keys == made.identity
    close(bot)


def test_what_check_says_of_the_passphrase(tmp_path: Path) -> None:
    made = Made(tmp_path)
    folder = str(tmp_path)
    assert keys_at_rest(folder, USER, None) == [(f"warning: {DEFAULT_IN_USE}", True)]
    [(line, fine)] = keys_at_rest(folder, USER, KEY)
    assert fine and "still pickled with nio's default passphrase" in line
    assert "re-pickles it with matrix.store_key_file at its next start" in line
    rekey(made.path, KEY)
    assert keys_at_rest(folder, USER, KEY) == [
        ("the Matrix crypto store is pickled with matrix.store_key_file", True)
    ]
    [(line, fine)] = keys_at_rest(folder, USER, "another passphrase")
    assert not fine and f"does NOT open with {KEY_NAME}" in line
    assert store_key.store_files(tmp_path / "nothing here", USER) == []


async def test_logging_in_moves_the_store_first_and_refuses_a_key_that_does_not_fit(
    tmp_path: Path,
) -> None:
    made = Made(tmp_path)

    def settings(key: str) -> MatrixSettings:
        # An address nobody answers at: what is tested happens before any request.
        return MatrixSettings(
            "http://127.0.0.1:9",
            USER,
            access_token="t",
            crypto_store=str(tmp_path),
            pickle_key=key,
            request_retries=0,
        )

    assert "'***'" in repr(settings(KEY)) and KEY not in repr(settings(KEY))
    with pytest.raises(Exception) as unreachable:
        await login(make_client(settings(KEY)), settings(KEY), None)
    assert not isinstance(unreachable.value, StoreKeyError)
    assert pickled_with(made.path, KEY) == "key"
    with pytest.raises(StoreKeyError, match="opens neither with matrix.store_key_file"):
        await login(make_client(settings("wrong")), settings("wrong"), None)
