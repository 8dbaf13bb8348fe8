"""The passphrase nio pickles the crypto store with, and moving a store onto a new one.

nio encrypts every private key it keeps on disk (the Olm account, the Olm sessions,
the Megolm room keys; nio 0.26 keeps no outbound group session on disk) with a
passphrase, by default the constant "DEFAULT_KEY": with it, a copy of the folder is a
copy of the bot's device. With `[matrix] store_key_file` nio gets that file's
passphrase instead, and a store still pickled with the default is re-pickled once, at
the first start with the key: every pickle of a store file in one SQLite transaction,
so that a crash midway leaves the store as it was and the next start does it again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..base import TransportError

log = logging.getLogger(__name__)

#: nio's own passphrase (`AsyncClientConfig.pickle_key`): no secret, it is in nio's source.
DEFAULT_KEY = "DEFAULT_KEY"
#: The configuration key that names the passphrase's file, for messages.
KEY_NAME = "matrix.store_key_file"


class StoreKeyError(TransportError):
    """A crypto store that neither the configured passphrase nor nio's default opens."""


@dataclass(frozen=True)
class Pickles:
    """One table of a nio store whose rows hold a pickle, and how nio reads one."""

    table: str
    id_column: str
    column: str
    words: str
    load: Callable[[bytes, str], object]


def _account(blob: bytes, key: str) -> object:
    from nio.crypto.sessions import OlmAccount

    return OlmAccount.from_pickle(blob, key)


def _olm_session(blob: bytes, key: str) -> object:
    from nio.crypto.sessions import Session

    return Session.from_pickle(blob, datetime.now(), key)


def _room_key(blob: bytes, key: str) -> object:
    from nio.crypto.sessions import InboundGroupSession

    # Only the pickle is re-written: the other columns stay as they are.
    return InboundGroupSession.from_pickle(blob, "", "", "", key)


# nio's peewee models, by their table names (nio/store/models.py).
PICKLES = (
    Pickles("accounts", "id", "account", "account(s)", _account),
    Pickles("olmsessions", "session_id", "session", "Olm session(s)", _olm_session),
    Pickles("megolminboundsessions", "session_id", "session", "room key(s)", _room_key),
)


def store_files(folder: str | Path, user_id: str) -> list[Path]:
    """Every nio store file of `user_id` in the folder (one per device it logged in as)."""
    base = Path(folder)
    if not base.is_dir():
        return []
    # Not a glob: a user id may hold characters a glob reads as a pattern.
    prefix = f"{user_id}_"
    return sorted(
        base / name for name in os.listdir(base) if name.startswith(prefix) and name.endswith(".db")
    )


def _opens(blob: bytes, key: str) -> bool:
    try:
        _account(blob, key)
    except ValueError:  # vodozemac's pickle errors: a MAC that does not match
        return False
    return True


def _accounts(db: sqlite3.Connection) -> list[bytes]:
    try:
        return [row[0] for row in db.execute("SELECT account FROM accounts")]
    except sqlite3.OperationalError:
        return []  # a store nio has not set up yet holds no keys


def pickled_with(path: Path, key: str | None) -> str | None:
    """Which passphrase opens the store file (changing nothing): "key" (the configured one),
    "default" (nio's), "none" (neither); None when it holds no account yet."""
    # Not read-only: a crash midway through `rekey` left a journal that must roll back.
    with contextlib.closing(sqlite3.connect(path)) as db:
        accounts = _accounts(db)
    if not accounts:
        return None
    if key is not None and all(_opens(blob, key) for blob in accounts):
        return "key"
    if all(_opens(blob, DEFAULT_KEY) for blob in accounts):
        return "default"
    return "none"


def _rows(db: sqlite3.Connection, pickles: Pickles) -> Iterator[tuple[object, bytes]]:
    yield from db.execute(f'SELECT "{pickles.id_column}", "{pickles.column}" FROM {pickles.table}')


def rekey(path: Path, key: str) -> dict[str, int]:
    """Re-pickle one store file from nio's default passphrase to `key`.

    Returns how many pickles of each kind were re-written (nothing when the file is
    pickled with `key` already or holds no account). StoreKeyError when neither
    passphrase opens it.
    """
    db = sqlite3.connect(path, isolation_level=None)
    try:
        # Pages freed by the update are zeroed, so that the old pickles (as good as
        # clear text under the default passphrase) do not stay in the file.
        db.execute("PRAGMA secure_delete = ON")
        db.execute("BEGIN IMMEDIATE")
        accounts = _accounts(db)
        if not accounts or all(_opens(blob, key) for blob in accounts):
            db.execute("ROLLBACK")
            return {}
        if not all(_opens(blob, DEFAULT_KEY) for blob in accounts):
            db.execute("ROLLBACK")
            raise StoreKeyError(
                f"the Matrix crypto store {path} opens neither with {KEY_NAME} nor with nio's "
                "default passphrase: put back the key file it was pickled with, or move the "
                "store away to log in as a new device"
            )
        done: dict[str, int] = {}
        for pickles in PICKLES:
            for row_id, blob in list(_rows(db, pickles)):
                fresh = pickles.load(blob, DEFAULT_KEY).pickle(key)  # type: ignore[attr-defined]
                db.execute(
                    f'UPDATE {pickles.table} SET "{pickles.column}" = ? '
                    f'WHERE "{pickles.id_column}" = ?',
                    (fresh, row_id),
                )
                done[pickles.words] = done.get(pickles.words, 0) + 1
        db.execute("COMMIT")
        return done
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    finally:
        db.close()


def rekey_stores(folder: str | Path, user_id: str, key: str) -> None:
    """Move every store file of `user_id` still on nio's default passphrase onto `key`."""
    for path in store_files(folder, user_id):
        done = rekey(path, key)
        if done:
            counts = ", ".join(f"{n} {words}" for words, n in done.items())
            log.info("Matrix crypto store %s re-pickled with %s (%s)", path, KEY_NAME, counts)


#: What `chatbot check` says while the bot runs on nio's passphrase (upgrades never brick).
DEFAULT_IN_USE = (
    "the Matrix crypto store is pickled with nio's default passphrase; "
    "set [matrix] store_key_file (chatbot init makes one)"
)


def keys_at_rest(folder: str | None, user_id: str, key: str | None) -> list[tuple[str, bool]]:
    """`chatbot check`'s lines on the crypto store's passphrase, from the files alone."""
    if folder is None:
        return []
    if key is None:
        return [(f"warning: {DEFAULT_IN_USE}", True)]
    lines = []
    for path in store_files(folder, user_id):
        try:
            found = pickled_with(path, key)
        except sqlite3.Error as error:
            lines.append((f"the Matrix crypto store {path} cannot be read: {error}", False))
            continue
        if found == "default":
            lines.append(
                (
                    f"the Matrix crypto store {path} is still pickled with nio's default "
                    f"passphrase; the bot re-pickles it with {KEY_NAME} at its next start",
                    True,
                )
            )
        elif found == "none":
            lines.append(
                (
                    f"the Matrix crypto store {path} does NOT open with {KEY_NAME} (nor nio's "
                    "default passphrase): put back the key file it was pickled with, or move "
                    "the store away to log in as a new device",
                    False,
                )
            )
    return lines or [(f"the Matrix crypto store is pickled with {KEY_NAME}", True)]
