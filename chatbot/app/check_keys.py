"""`chatbot check`'s "keys at rest": who could read the bot's secrets off the disk.

Warnings only, except a key that no longer opens what it protects: the bot runs with
a secret file others may read, or with nio's default passphrase on the Matrix crypto
store (an upgrade must not stop a bot that ran yesterday), but the check says so.
"""

from __future__ import annotations

from chatbot.app.wiring import servers, settings_for
from chatbot.config import Config

#: Mode bits that let anyone but the file's owner at it.
OTHERS = 0o077


def open_secret_files(config: Config) -> list[str]:
    """A warning per secret file the configuration names that group or others may use."""
    found = []
    for key, path in config.secret_files().items():
        mode = path.stat().st_mode
        if mode & OTHERS:
            found.append(
                f"warning: {key}: secret file {path} can be read by group or others "
                f"(mode {mode & 0o777:o}): chmod 600 {path}"
            )
    return found


def keys_at_rest(config: Config) -> list[tuple[str, bool]]:
    """(line, fine) pairs: each network's keys on disk, then the secret files' modes."""
    found: list[tuple[str, bool]] = []
    for network, _ in servers(config):
        if network.keys_at_rest is not None:
            found += network.keys_at_rest(settings_for(config, network))
    return found + [(line, True) for line in open_secret_files(config)]
