"""`chatbot init [--xmpp | --matrix] DIR`: a configuration to fill in, that checks out at once.

Writes DIR/bot.toml: with --xmpp or --matrix a short one with only what that network
needs (`short_config`), without either the example configuration with every key,
commented. Beside it the secret files it names under DIR/secrets/
(readable by the owner only: placeholders, but for the Matrix crypto store's
passphrase, which is made here at random), and, unless --repo names the repository,
an empty git repository DIR/repo with docs/intent/ for the board. Each agent CLI is
the real one where it is on PATH, else the scripted stand-in the demo runs on.
`chatbot check --no-connect` then passes and lists what is left to fill in.
Nothing is written when DIR/bot.toml exists, or when --owner or --repo is wrong.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from chatbot.app import demo
from chatbot.app.check import PLACEHOLDER
from chatbot.board.importer import SOURCES
from chatbot.config import ConfigError, parse_config
from chatbot.config.bot import identity_problem
from chatbot.config_file import SCP_LIKE_RE, URL_RE
from chatbot.transports.networks import NETWORKS

_SECTION = re.compile(r"^\[(?P<name>[a-z0-9_.-]+)\]\s*$")
_BINARY = re.compile(r'^binary = "(?P<name>[^"]*)"')
_REPO = re.compile(r'^repo = "[^"]*"')
_OWNERS = re.compile(r"^owners = \[.*\]")
#: Secret files whose secret init makes (random), as nobody else hands it out.
MADE_HERE = frozenset({"matrix.store_key_file"})


def example_text() -> str:
    """The example configuration shipped with the package (config/example.toml)."""
    return resources.files("chatbot.app").joinpath("example.toml").read_text(encoding="utf-8")


class InitRefused(Exception):
    """What init was asked cannot be written; nothing was."""


def init(
    folder: Path, network: str | None = None, *, repo: str | None = None, owner: str | None = None
) -> list[str]:
    """Write the configuration into `folder`; returns what was written. Refuses to
    overwrite anything (a second init must not clobber secrets already filled in)."""
    target = folder / "bot.toml"
    if folder.exists() and not folder.is_dir():
        raise InitRefused(f"{folder} is a file, not a folder: init writes DIR/bot.toml")
    if target.exists() or target.is_symlink():
        raise InitRefused(f"{target} exists already; nothing was written (edit it instead)")
    if owner is not None:
        _check_owner(owner, network)
    repo_value = "repo" if repo is None else _repo_value(repo)
    if network is None:
        text = _adapted(example_text(), repo_value, owner)
    else:
        text = short_config(network, owner=owner, repo=repo_value, binary=_binary("codex"))
    try:
        config = parse_config(text, target, secrets=False)  # init writes them next
    except ConfigError as error:
        raise InitRefused(f"{error}; nothing was written") from None
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
    checkout = config.bot.checkout
    if repo is None and not checkout.exists():
        (checkout / "docs" / "intent").mkdir(parents=True)
        (checkout / "docs" / "intent" / ".keep").write_text("")
        subprocess.run(["git", "init", "-q", "-b", "main", str(checkout)], check=True)
        written.append(f"{checkout} (an empty git repository)")
    with target.open("x", encoding="utf-8") as file:
        file.write(text)
    written.insert(0, str(target))
    return written


def intents_note(repo: str | None) -> str | None:
    """What a --repo folder still needs before the board shows a card (check fails on
    it until then): its intent folder. None when it has one, or is an address."""
    if repo is None or URL_RE.match(repo) or SCP_LIKE_RE.match(repo):
        return None
    path = Path(repo).expanduser().absolute()
    if any((path / folder).is_dir() for folder, _ in SOURCES):
        return None
    return (
        f"note: {path} has no docs/intent/ yet: each docs/intent/<slug>.md committed "
        "there becomes a card"
    )


def _check_owner(owner: str, network: str | None) -> None:
    if network is None:
        problem = identity_problem(owner)
    else:
        problem = NETWORKS[network].identity_problem(owner)
    if problem:
        shown = owner if len(owner) <= 80 else owner[:77] + "..."
        needs = f", which --{network} needs" if network else ""
        raise InitRefused(f"--owner {shown!r} is {problem}{needs}")


def _repo_value(repo: str) -> str:
    """What [bot] repo says: a git address as given, a folder as its absolute path."""
    if URL_RE.match(repo) or SCP_LIKE_RE.match(repo):
        return repo  # `chatbot check` tries to reach it
    path = Path(repo).expanduser().absolute()
    if not path.is_dir():
        raise InitRefused(f"--repo {repo}: no such folder; name your git repository's folder")
    if not (path / ".git").exists():
        raise InitRefused(f"--repo {repo}: not a git repository (git init it, or name another)")
    return str(path)


def _secret_for(key: str) -> str:
    """What init writes into a secret file: a passphrase the bot itself is the only
    user of is made here; a secret a server or vendor hands out is left to fill in."""
    if key in MADE_HERE:
        return secrets.token_urlsafe(32) + "\n"
    return f"{PLACEHOLDER}: replace this line with the secret for {key}\n"


def _adapted(text: str, repo: str, owner: str | None) -> str:
    """The example, pointed at what this machine has: the repository (init's own, or
    --repo), the owner if given, and each runtime's CLI where it is installed, else
    the scripted stand-in."""
    lines = []
    section = ""
    for line in text.splitlines():
        if found := _SECTION.match(line):
            section = found["name"]
        if section == "bot" and _REPO.match(line):
            line = f"repo = {toml_string(repo)}"
            if repo == "repo":
                line += "                   # an empty repository init made: point it at yours"
        if section == "bot" and owner is not None and _OWNERS.match(line):
            line = f"owners = [{toml_string(owner)}]"
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


# `--xmpp`, `--matrix`: [bot], the network's section (its record's `Starter`), one
# runtime and one lane, every role on that runtime by default. No deploy step, no web
# board, nothing on localhost: the full example shows how to add them.
_HEAD = """\
# The intent-board bot on {title}: only the keys it needs. Every other key (budgets,
# more lanes, a deploy step, the web board) is in the full example, explained:
# `chatbot init DIR` without --{name} writes it. Relative paths are relative to this
# file; each *_file key names a file holding one secret, never the secret itself.
# Check with: chatbot check --config bot.toml [--no-connect]

[bot]
# The only identities that may decide: {who}.
owners = [{owner}]
# The git repository whose docs/intent/*.md are the cards (a folder, or a git address).
repo = {repo}
database = "var/board.sqlite3"
workspaces = "var/workspaces"

"""

_AGENTS = """
# The agent CLI every role runs on: a name on PATH, or a path.
[runtimes.codex]
binary = {binary}
pass_env = ["CODEX_HOME"]       # where its login lives

# The one builder lane the operator may choose for a card.
[lanes.light]
runtime = "codex"
model = "gpt-5-codex"
reasoning_effort = "medium"
iteration_limit = 10            # agent turns per builder run, 5 to 40
concurrency = 1                 # builder runs at the same time
"""


def short_config(name: str, *, owner: str | None, repo: str, binary: str) -> str:
    """The text of the short configuration for the network called `name`."""
    start = NETWORKS[name].starter
    assert start is not None, name  # the command line offers only networks with one
    head = _HEAD.format(
        title=start.title,
        name=name,
        who=start.owners_words,
        owner=toml_string(owner or start.owner_example),
        repo=toml_string(repo),
    )
    return head + start.section + _AGENTS.format(binary=toml_string(binary))


def toml_string(value: str) -> str:
    """`value` as a TOML basic string."""
    # A JSON string is a TOML basic string (the same escapes).
    return json.dumps(value, ensure_ascii=False)
