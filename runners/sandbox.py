"""An OS sandbox around one agent process: bubblewrap (`bwrap`), Debian's `bubblewrap`.

An agent CLI runs code a model chose, and the model reads text an attacker may have
written (the repository, the intent). So the process sees a root made for it alone:

- the system read-only (`/usr`, `/etc`, the libraries), a private `/proc`, `/dev` and
  `/tmp`, the bot user's home as an empty throw-away folder;
- the CLI's own installation and the interpreter its script names, read-only;
- its working folder (read-write for a writing role, read-only otherwise) and what git
  needs of the repository, read-only;
- the runtime's own home (`<workspaces>/.agent-homes/<runtime>`) and the paths the CLI
  keeps its state in, read-write;
- nothing else: every path `hidden` names (the bot's configuration folder, its secret
  files, the board's database, the other worktrees, backups) is masked even where it
  lies inside something shown.

The rules are a list of (path, what); deeper paths are applied after shallower ones,
so a worktree inside a hidden folder is shown again and a secret inside a shown
folder is hidden again. Bubblewrap was chosen because it is small, unprivileged (user
namespaces), packaged by Debian and already what codex uses for its own sandbox;
nested in ours, codex's still works.

The network is the run's own empty namespace unless the lane opens it: then the only
way out is `runners.forwarder`, reached through a Unix socket bound into the sandbox,
which a relay inside (`runners.sandbox_relay`) serves on 127.0.0.1.
"""

from __future__ import annotations

import enum
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

TOOL = "bwrap"
ROOT = Path("/")
# Where the provider forwarder's socket appears inside, and the relay's port there: the
# sandbox has a network namespace of its own, so any port is free.
SOCKET_INSIDE = "/run/intent-board/provider.sock"
RELAY_PORT = 47110
# Shown read-only when they exist: what any program needs to start.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# Never shown even though /etc is: the system's own secrets.
SYSTEM_HIDDEN = ("/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/sudoers", "/etc/sudoers.d")


class NetworkAccess(enum.StrEnum):
    """What the sandbox's network reaches."""

    #: Only the model provider, through the bot's forwarder (or nothing, without one).
    PROVIDER = "provider"
    #: The host's network, on purpose (`[lanes.X] network = "open"`).
    OPEN = "open"


class SandboxError(Exception):
    """The sandbox cannot be made: the tool is missing or a path it needs is not there."""


class Show(enum.Enum):
    READ = "ro"
    WRITE = "rw"
    HIDE = "hide"
    SCRATCH = "tmpfs"


@dataclass(frozen=True, slots=True)
class Sandbox:
    """What one run may see. `tool` is the bwrap to run (an absolute path)."""

    tool: str
    network: NetworkAccess = NetworkAccess.PROVIDER
    readable: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    #: Empty folders of its own, thrown away at the end (the bot user's home).
    scratch: tuple[Path, ...] = ()
    #: The forwarder's socket outside, bound to SOCKET_INSIDE; None: no way out.
    provider_socket: Path | None = None
    #: Variables set inside the sandbox (HOME, TMPDIR, the relay's address).
    env: Mapping[str, str] = field(default_factory=dict)
    #: Files of the bot's shown read-only at another path inside (a resolv.conf).
    files: Mapping[Path, Path] = field(default_factory=dict)


def find_tool(name: str = TOOL, path: str | None = None) -> str | None:
    """The sandbox tool's absolute path on this host, or None."""
    found = shutil.which(name, path=path if path is not None else os.environ.get("PATH"))
    return os.path.realpath(found) if found else None


def _rules(sandbox: Sandbox) -> list[tuple[Path, Show]]:
    rules: dict[Path, Show] = {}
    for name in SYSTEM:
        rules[Path(name)] = Show.READ
    for each in sandbox.readable:
        rules.setdefault(each, Show.READ)
    for each in sandbox.writable:
        rules[each] = Show.WRITE
    if ROOT in rules:
        # Showing the root would show everything: no rule may.
        raise SandboxError("the sandbox would show the whole file system (/)")
    for each in (*sandbox.hidden, *map(Path, SYSTEM_HIDDEN)):
        # A path both shown and hidden is hidden: a secret named by mistake stays out.
        rules[each] = Show.HIDE
    for each in sandbox.scratch:
        rules[each] = Show.SCRATCH  # empty: hides what it covers too
    # Shallow first, so that a deeper rule is mounted over the one that holds it.
    return sorted(rules.items(), key=lambda item: (len(item[0].parts), str(item[0])))


def _under_shown(path: Path, shown: Sequence[Path]) -> bool:
    return any(path == each or each in path.parents for each in shown)


def wrap(argv: Sequence[str], cwd: Path, sandbox: Sandbox) -> list[str]:
    """The command line that runs `argv` in `cwd` inside the sandbox.

    `argv[0]` must be an absolute path (the caller resolved it on the host's PATH):
    inside, the same path names the same program.
    """
    if not argv or not os.path.isabs(argv[0]):
        raise SandboxError("the program to sandbox must be given by its absolute path")
    out = [
        sandbox.tool,
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/var/tmp",
    ]
    if sandbox.network is NetworkAccess.PROVIDER:
        out.append("--unshare-net")
    shown: list[Path] = []
    for path, show in _rules(sandbox):
        exists = os.path.lexists(path)
        if show is Show.SCRATCH:
            out += ["--tmpfs", str(path)]
            continue
        if show is Show.HIDE:
            if not exists or not _under_shown(path, shown):
                continue  # nothing shows it: already out of sight
            if os.path.isdir(path) and not os.path.islink(path):
                out += ["--tmpfs", str(path)]
            else:
                out += ["--ro-bind", "/dev/null", str(path)]
            continue
        if not exists:
            if show is Show.WRITE:
                raise SandboxError(f"{path} does not exist; the sandbox cannot show it")
            continue  # a system folder this host does not have
        out += ["--bind" if show is Show.WRITE else "--ro-bind", str(path), str(path)]
        shown.append(path)
    if sandbox.provider_socket is not None:
        out += ["--bind", str(sandbox.provider_socket), SOCKET_INSIDE]
        if os.geteuid() == 0:
            # Only for the relay's name refusal on port 53, in the sandbox's own network.
            # Not for any other user: there bwrap's network belongs to an outer user
            # namespace, where the capability counts for nothing, and it would be handed
            # down as an ambient capability that codex's own bwrap refuses to start with
            # ("Unexpected capabilities but not setuid"). Lookups then wait out the
            # resolver's timeout (1 s: the resolv.conf's options).
            out += ["--cap-add", "CAP_NET_BIND_SERVICE"]
    for inside, outside in sandbox.files.items():
        out += ["--ro-bind", str(outside), str(_real_target(inside))]
    for name, value in sandbox.env.items():
        out += ["--setenv", name, value]
    out += ["--chdir", str(cwd), "--", *argv]
    return out


def _real_target(path: Path) -> Path:
    """Where a file the sandbox replaces really is: /etc/resolv.conf is often a link
    into /run, which bubblewrap would not bind over."""
    try:
        return Path(os.path.realpath(path)) if path.is_symlink() else path
    except OSError:
        return path


def program_paths(binary: str, env: Mapping[str, str]) -> tuple[str, tuple[Path, ...]]:
    """(the program's absolute path, the folders it needs to run) for a CLI.

    Node CLIs from npm are a script in `node_modules/.bin` linking into their package,
    which loads other packages beside it: the whole `node_modules` folder is shown. A
    script's interpreter (`#!/usr/bin/env node`, a virtualenv's python) is shown with
    its installation prefix.
    """
    found = shutil.which(binary, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(binary)
    program = os.path.abspath(found)
    real = Path(os.path.realpath(program))
    needed: list[Path] = [_install_root(Path(program)), _install_root(real)]
    interpreter = _interpreter(real, env)
    if interpreter is not None:
        needed += _prefixes(interpreter)
    return program, tuple(dict.fromkeys(needed))


def _install_root(program: Path) -> Path:
    for parent in program.parents:
        if parent.name == "node_modules":
            return parent
    return program.parent


def _interpreter(script: Path, env: Mapping[str, str]) -> Path | None:
    try:
        with open(script, "rb") as file:
            first = file.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        names = [word for word in words[1:] if not word.startswith("-")]
        if not names:
            return None
        found = shutil.which(names[0], path=env.get("PATH", os.defpath))
        return Path(found) if found else None
    return Path(words[0])


def _prefixes(interpreter: Path) -> list[Path]:
    """An interpreter's installation: the folder above its `bin`, through its links."""
    found = []
    for each in (interpreter, Path(os.path.realpath(interpreter))):
        folder = each.parent
        prefix = folder.parent if folder.name == "bin" else folder
        # /bin/bash's prefix would be the root: the system folders are shown anyway.
        if len(prefix.parts) > 1:
            found.append(prefix)
    return found


@cache
def python_paths() -> tuple[Path, ...]:
    """This interpreter's installation, for the relay that runs inside: the real
    binary's prefix and the standard library."""
    real = Path(os.path.realpath(sys.executable))
    paths = {*_prefixes(real), Path(sys.base_prefix), Path(os.path.dirname(os.__file__))}
    return tuple(sorted(paths))


def git_paths(cwd: Path) -> tuple[Path, ...]:
    """What git needs of the repository to work in `cwd`: for a worktree, the
    repository's git folder (its objects and refs) and the worktree's own admin folder;
    both read-only to the agent. Nothing for a folder that is no worktree."""
    link = cwd / ".git"
    try:
        if link.is_symlink() or not link.is_file():
            return ()
        text = link.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ()
    if not text.startswith("gitdir:"):
        return ()
    admin = Path(text.removeprefix("gitdir:").strip())
    if not admin.is_absolute():
        admin = (cwd / admin).resolve()
    common = admin
    try:
        common_text = (admin / "commondir").read_text(encoding="utf-8").strip()
        common = (admin / common_text).resolve()
    except OSError:
        pass
    return (common, admin)


# The relay starts beside the CLI, not before it: Python's start-up (about 12 ms) would
# otherwise be added to every spawn. It listens within milliseconds, while a CLI takes
# far longer to start and send its first request (the real codex, claude and gemini in
# tests/realcli all find it). It ends with the sandbox: when the CLI exits, the
# sandbox's process namespace goes, and every process in it.
RELAY_SHELL = (
    'python="$1"; shift; '
    '"$python" -I -S -c "$0" {socket} {port} </dev/null >/dev/null 2>&1 & exec "$@"'
)


@cache
def _relay_source() -> str:
    from runners import sandbox_relay

    return Path(sandbox_relay.__file__).read_text(encoding="utf-8")


def relay_argv(argv: Sequence[str]) -> list[str]:
    """`argv` with the relay serving the provider on 127.0.0.1 beside it."""
    python = os.path.realpath(sys.executable)
    shell = RELAY_SHELL.format(socket=SOCKET_INSIDE, port=RELAY_PORT)
    return ["/bin/sh", "-c", shell, _relay_source(), python, *argv]


def relay_url(base_url: str) -> str:
    """The provider's base URL as the CLI inside reaches it: the relay, same path."""
    from urllib.parse import urlsplit

    path = urlsplit(base_url).path
    return f"http://127.0.0.1:{RELAY_PORT}{path}"
