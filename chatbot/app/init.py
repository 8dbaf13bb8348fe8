"""`chatbot init DIR`: a configuration to fill in, that checks out at once.

Writes DIR/bot.toml (the example configuration with every key, commented), the
secret files it names under DIR/secrets/ (readable by the owner only: placeholders,
but for the Matrix crypto store's passphrase, which is made here at random), and an
empty git repository DIR/repo with docs/intent/ for the board until `bot.repo`
names the real one. Each agent CLI is the real one where it is on PATH,
else the scripted stand-in the demo runs on. `chatbot check --no-connect` then
passes and lists what is left to fill in.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from chatbot.app import demo
from chatbot.app.check import PLACEHOLDER
from chatbot.config import parse_config

_SECTION = re.compile(r"^\[(?P<name>[a-z0-9_.-]+)\]\s*$")
_BINARY = re.compile(r'^binary = "(?P<name>[^"]*)"')
_REPO = re.compile(r'^repo = "[^"]*"')
#: Secret files whose secret init makes (random), as nobody else hands it out.
MADE_HERE = frozenset({"matrix.store_key_file"})


def example_text() -> str:
    """The example configuration shipped with the package (config/example.toml)."""
    return resources.files("chatbot.app").joinpath("example.toml").read_text(encoding="utf-8")


def init(folder: Path) -> list[str]:
    """Write the configuration into `folder`; returns what was written. Refuses to
    overwrite anything (a second init must not clobber secrets already filled in)."""
    target = folder / "bot.toml"
    if target.exists():
        raise FileExistsError(f"{target} exists already; nothing was written")
    text = _adapted(example_text())
    config = parse_config(text, target, secrets=False)  # init writes them next
    written = []
    folder.mkdir(parents=True, exist_ok=True)
    for key, path in config.secret_files().items():
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Created owner-only: the secret is never readable by others, not even briefly.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(_secret_for(key))
        written.append(str(path))
    repo = config.bot.checkout
    if not repo.exists():
        (repo / "docs" / "intent").mkdir(parents=True)
        (repo / "docs" / "intent" / ".keep").write_text("")
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        written.append(f"{repo} (an empty git repository)")
    target.write_text(text, encoding="utf-8")
    written.insert(0, str(target))
    return written


def _secret_for(key: str) -> str:
    """What init writes into a secret file: a passphrase the bot itself is the only
    user of is made here; a secret a server or vendor hands out is left to fill in."""
    if key in MADE_HERE:
        return secrets.token_urlsafe(32) + "\n"
    return f"{PLACEHOLDER}: replace this line with the secret for {key}\n"


def _adapted(text: str) -> str:
    """The example, pointed at what this machine has: the repository init makes, and
    each runtime's CLI where it is installed, else the scripted stand-in."""
    lines = []
    section = ""
    for line in text.splitlines():
        if found := _SECTION.match(line):
            section = found["name"]
        if section == "bot" and _REPO.match(line):
            line = (
                'repo = "repo"                   # an empty repository init made: point it at yours'
            )
        if section.startswith("runtimes.") and (found := _BINARY.match(line)):
            line = f'binary = "{_binary(found["name"])}"'
        lines.append(line)
    return "\n".join(lines) + "\n"


def _binary(name: str) -> str:
    if shutil.which(name):
        return name
    try:
        return demo.scripted_cli(name)
    except FileNotFoundError:
        return name  # `chatbot check` will say it is missing
