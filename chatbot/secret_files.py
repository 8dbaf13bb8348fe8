"""Secret files named in the configuration: checked when it is loaded (never printed),
read only where the one consumer that needs the value is started."""

from __future__ import annotations

from pathlib import Path


class SecretFileError(ValueError):
    """A secret file is missing, unreadable, empty or too short."""


# Anyone who can reach the web board's port may guess its token: it must be long.
MIN_SECRET_CHARS = {"web.token_file": 16}


def check_secret_files(files: dict[str, Path], config_file: Path) -> None:
    """Every secret file the configuration names is there, readable and not empty."""
    file = config_file
    for key, path in files.items():
        try:
            value = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            raise SecretFileError(f"{file}: {key}: secret file {path} does not exist") from None
        except OSError as error:
            raise SecretFileError(
                f"{file}: {key}: secret file {path} cannot be read: {error.strerror}"
            ) from None
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
    return path.read_text(encoding="utf-8").strip()
