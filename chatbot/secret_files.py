"""Secret files named in the configuration: checked when it is loaded (never printed),
read only where the one consumer that needs the value is started."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class SecretFileError(ValueError):
    """A secret file is missing, unreadable, empty or too short."""


# Anyone who can reach the web board's port may guess its token: it must be long.
MIN_SECRET_CHARS = {"web.token_file": 16, "web.metrics_token_file": 16}
# A password, token or key is short; more is a file named by mistake (a log, a disk image).
MAX_SECRET_BYTES = 64 * 1024


def _not_regular(mode: int) -> str | None:
    """What a file that is not a regular file is, in words; None for a regular one."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _read(path: Path) -> str:
    """The file's text; SecretFileError says what is wrong with it, after the path."""
    # A named pipe blocks open() and read() until someone writes to it, a device may
    # never end: look before opening, and open without blocking, so that neither a
    # pipe nor one swapped in after the look can hang `check` or the start.
    try:
        kind = _not_regular(os.stat(path).st_mode)
        if kind is None:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as file:
                kind = _not_regular(os.fstat(fd).st_mode)
                data = b"" if kind else file.read(MAX_SECRET_BYTES + 1)
    except FileNotFoundError:
        raise SecretFileError("does not exist") from None
    except OSError as error:
        raise SecretFileError(f"cannot be read: {error.strerror or error}") from None
    if kind is not None:
        raise SecretFileError(f"is {kind}; name a regular file holding only the secret")
    if len(data) > MAX_SECRET_BYTES:
        raise SecretFileError(
            f"is larger than {MAX_SECRET_BYTES // 1024} KiB; name a file holding only the secret"
        )
    try:
        # Where the bad byte is would tell something about the secret: not said.
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SecretFileError("is not UTF-8 text; write the secret as UTF-8") from None


def check_secret_files(files: dict[str, Path], config_file: Path) -> None:
    """Every secret file the configuration names is a regular file, UTF-8 and not empty."""
    file = config_file
    for key, path in files.items():
        try:
            value = _read(path).strip()
        except SecretFileError as error:
            raise SecretFileError(f"{file}: {key}: secret file {path} {error}") from None
        if not value:
            raise SecretFileError(f"{file}: {key}: secret file {path} is empty")
        if len(value) < MIN_SECRET_CHARS.get(key, 1):
            raise SecretFileError(
                f"{file}: {key}: secret file {path} holds fewer than {MIN_SECRET_CHARS[key]} "
                "characters; make a long one with: python3 -c 'import secrets; "
                f"print(secrets.token_urlsafe(32))' > {path}"
            )


def read_secret(path: Path) -> str:
    """Read a secret file's value, for handing to the one consumer that needs it."""
    try:
        return _read(path).strip()
    except SecretFileError as error:
        raise SecretFileError(f"secret file {path} {error}") from None
