"""The shipped systemd unit (config/intent-board.service) is hardened (issue 34 point 4)
and the bot still runs its agents under it.

- `systemd-analyze security --offline=true` rates it 3.0 or less ("OK"; 8.8 before).
- It still names what the bot needs (Type=notify, its state folder writable, ...) and
  none of the settings that stop bubblewrap (`runners.sandbox`) or the node CLIs.
- The bot's sandbox, as `runners.sandbox.wrap` builds it, runs a real bubblewrap under
  the restrictions of the unit that can be reproduced without systemd: its system call
  filter (the unit's own SystemCallFilter lines, expanded by systemd-analyze, loaded
  with libseccomp), SystemCallErrorNumber, SystemCallArchitectures=native,
  RestrictAddressFamilies, NoNewPrivileges and, when the tests run as root, an empty
  CapabilityBoundingSet and an unprivileged user. Inside, node (the CLIs' runtime, its
  JIT) writes into the worktree and talks to the provider socket; with the network open
  a host listener is reached. Without @mount or AF_NETLINK the same run fails, so the
  test can fail.

Not covered here, as only systemd itself makes them: the mount namespace the unit
describes (ProtectSystem, ProtectHome, ReadWritePaths, PrivateTmp, PrivateDevices,
PrivateUsers, ProtectKernel*, ProtectProc, ProtectControlGroups), and the argument
checks of RestrictRealtime, RestrictSUIDSGID and LockPersonality. Those were checked
by booting systemd 252 in namespaces of its own with this unit (issue 34's report).
"""

from __future__ import annotations

import ctypes.util
import errno
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from runners.sandbox import SOCKET_INSIDE, NetworkAccess, Sandbox, find_tool, program_paths, wrap

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "config" / "intent-board.service"
ANALYZE = shutil.which("systemd-analyze")
TOOL = find_tool()
NODE = shutil.which("node")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
# scripts/test installs bubblewrap; a machine without it runs the other tests.
needs_bwrap = pytest.mark.skipif(TOOL is None, reason="bubblewrap (bwrap) is not installed")
# The stand-in for the unit's unprivileged user when the tests run as root.
NOBODY = 65534


def unit_settings(section: str = "Service") -> dict[str, list[str]]:
    """Each key of a section with its values in order (systemd allows a key many times)."""
    found: dict[str, list[str]] = defaultdict(list)
    current = None
    for raw in UNIT.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = line.strip("[]")
        elif current == section:
            key, _, value = line.partition("=")
            found[key.strip()].append(value.strip())
    return found


def words(unit: dict[str, list[str]], key: str) -> list[str]:
    return [word for value in unit.get(key, []) for word in value.split()]


@needs_analyze
def test_systemd_analyze_rates_the_unit_ok() -> None:
    assert ANALYZE is not None
    done = subprocess.run(
        [ANALYZE, "security", "--offline=true", "--no-pager", str(UNIT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = re.search(r"Overall exposure level for intent-board\.service: (\d+\.\d+)", done.stdout)
    assert found, done.stdout + done.stderr
    assert float(found[1]) <= 3.0, done.stdout


# What each of the bot's bwrap options unshares (bubblewrap always makes a mount namespace).
UNSHARED = {
    "--unshare-user": "user",
    "--unshare-ipc": "ipc",
    "--unshare-pid": "pid",
    "--unshare-uts": "uts",
    "--unshare-cgroup-try": "cgroup",
    "--unshare-net": "net",
}


def test_the_unit_keeps_what_the_bot_and_its_sandbox_need() -> None:
    unit = unit_settings()
    assert unit["Type"] == ["notify"] and unit["NotifyAccess"] == ["main"]
    assert unit["RestartPreventExitStatus"] == ["2"]
    assert unit["UMask"] == ["0077"] and unit["NoNewPrivileges"] == ["true"]
    # The bot writes its database, worktrees and the CLIs' logins below its folder.
    folder = Path(unit["WorkingDirectory"][-1])
    writable = [Path(path.lstrip("-")) for path in words(unit, "ReadWritePaths")]
    assert any(path == folder or path in folder.parents for path in writable), writable
    assert unit.get("ProtectSystem") == ["strict"]
    # Every namespace the bot's bubblewrap makes stays allowed.
    argv = wrap(["/bin/true"], Path("/"), Sandbox(tool="/usr/bin/bwrap"))
    needed = {"mnt"} | {UNSHARED[flag] for flag in argv if flag in UNSHARED}
    assert needed == {"user", "mnt", "ipc", "pid", "uts", "cgroup", "net"}
    restricted = words(unit, "RestrictNamespaces")
    assert not restricted or restricted in (["no"], ["false"]) or needed <= set(restricted)
    # bubblewrap reads /proc/sys/kernel/overflowuid; node's JIT needs W+X memory; the bot
    # and the agents reach the chat servers and the providers.
    assert unit.get("ProcSubset", ["all"]) == ["all"]
    assert unit.get("MemoryDenyWriteExecute", ["false"]) == ["false"]
    assert unit.get("PrivateNetwork", ["false"]) == ["false"]
    families = words(unit, "RestrictAddressFamilies")
    assert {"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"} <= set(families)


# ---- the bot's sandbox under the unit's reproducible restrictions ----


def syscall_groups() -> dict[str, list[str]]:
    """systemd's system call groups (`systemd-analyze syscall-filter`), by name."""
    assert ANALYZE is not None
    listed = subprocess.run(
        [ANALYZE, "syscall-filter", "--no-pager"], capture_output=True, text=True, check=True
    ).stdout
    groups: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in listed.splitlines():
        if re.fullmatch(r"@[\w-]+", line):
            current = groups.setdefault(line, [])
        elif current is not None and re.fullmatch(r"    [@\w-]+", line):
            current.append(line.strip())
        elif not line.strip():
            current = None
    return groups


def expand(names: list[str], groups: dict[str, list[str]]) -> set[str]:
    found: set[str] = set()
    for name in names:
        found |= expand(groups[name], groups) if name.startswith("@") else {name}
    return found


def allowed_calls(unit: dict[str, list[str]], groups: dict[str, list[str]]) -> set[str]:
    """The allow list the unit's SystemCallFilter lines make (an allow list first, then
    `~` lines taking calls out), as systemd reads them."""
    allowed: set[str] = set()
    for value in unit["SystemCallFilter"]:
        if value.startswith("~"):
            allowed -= expand(value[1:].split(), groups)
        else:
            allowed |= expand(value.split(), groups)
    return allowed


# Runs as the service's main process would: takes what the unit takes away, prints what
# three calls return under the filter, then execs the command (bubblewrap).
RESTRICT = r"""
import ctypes, ctypes.util, json, os, sys

spec = json.loads(sys.argv[1])
argv = sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24
if spec["bounding_set"] == []:
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    for cap in range(last + 1):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_CAPBSET_DROP")
if spec["uid"] is not None:
    os.setgroups([])
    os.setresgid(spec["uid"], spec["uid"], spec["uid"])
    os.setresuid(spec["uid"], spec["uid"], spec["uid"])
if spec["no_new_privs"] and libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
    raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")


class Compare(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]


seccomp = ctypes.CDLL(spec["libseccomp"], use_errno=True)
seccomp.seccomp_init.restype = ctypes.c_void_p
seccomp.seccomp_init.argtypes = [ctypes.c_uint32]
seccomp.seccomp_rule_add_array.argtypes = [
    ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(Compare)]
seccomp.seccomp_load.argtypes = [ctypes.c_void_p]
seccomp.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
ALLOW, EQUAL = 0x7FFF0000, 4
# Only this architecture's calls: seccomp_init's filter kills any other ABI.
context = seccomp.seccomp_init(0x00050000 | spec["errno"])
numbers = {}
for name in spec["allow"]:
    number = seccomp.seccomp_syscall_resolve_name(name.encode())
    if number < 0:
        continue  # not a call of this architecture
    numbers[name] = number
    if name == "socket" and spec["families"] is not None:
        for family in spec["families"]:
            compare = Compare(0, EQUAL, family, 0)
            seccomp.seccomp_rule_add_array(context, ALLOW, number, 1, ctypes.byref(compare))
        continue
    result = seccomp.seccomp_rule_add_array(context, ALLOW, number, 0, None)
    if result < 0:
        raise OSError(-result, "seccomp_rule_add " + name)
result = seccomp.seccomp_load(context)
if result < 0:
    raise OSError(-result, "seccomp_load")


def call(name, *args):
    number = seccomp.seccomp_syscall_resolve_name(name.encode())
    libc.syscall.restype = ctypes.c_long
    done = libc.syscall(ctypes.c_long(number), *args)
    return 0 if done >= 0 else ctypes.get_errno()


action = ctypes.c_uint32(ALLOW)
print(json.dumps({
    # codex's own sandbox installs a seccomp filter (SECCOMP_GET_ACTION_AVAIL: harmless).
    "seccomp": call("seccomp", ctypes.c_uint(2), ctypes.c_uint(0), ctypes.byref(action)),
    # landlock_create_ruleset(NULL, 0, VERSION): the ABI version, or "not enabled".
    "landlock": call("landlock_create_ruleset", None, ctypes.c_size_t(0), ctypes.c_uint32(1)),
    # Outside the allow list (@debug): refused with the unit's error number.
    "perf_event_open": call("perf_event_open", None, 0, -1, -1, 0),
}), flush=True)
os.execv(argv[0], argv)
"""


def restrictions(drop: str | None = None) -> dict:
    """The unit's reproducible restrictions, for RESTRICT; `drop` takes one thing out that
    the unit keeps for bubblewrap (a system call group or an address family)."""
    unit = unit_settings()
    groups = syscall_groups()
    allowed = allowed_calls(unit, groups)
    families = words(unit, "RestrictAddressFamilies")
    if drop is not None and drop.startswith("@"):
        allowed -= expand([drop], groups)
    elif drop is not None:
        families.remove(drop)
    library = ctypes.util.find_library("seccomp")
    assert library, "libseccomp is not installed (Debian: libseccomp2)"
    root = os.geteuid() == 0
    return {
        "allow": sorted(allowed),
        "errno": getattr(errno, unit["SystemCallErrorNumber"][-1]),
        "families": [int(getattr(socket, name)) for name in families] or None,
        "no_new_privs": unit["NoNewPrivileges"] == ["true"],
        "bounding_set": words(unit, "CapabilityBoundingSet") if root else None,
        "uid": NOBODY if root else None,
        "libseccomp": library,
    }


@contextmanager
def host_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder the unprivileged user can use (the stand-in user's own, as root)."""
    if os.geteuid() != 0:
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="unit-security-", dir="/var/tmp"))
    try:
        folder.chmod(0o755)
        os.chown(folder, NOBODY, NOBODY)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def make(folder: Path, *names: str) -> list[Path]:
    made = []
    for name in names:
        path = folder / name
        path.mkdir(parents=True)
        if os.geteuid() == 0:
            for each in (path, *path.parents):
                if each == folder:
                    break
                os.chown(each, NOBODY, NOBODY)
        made.append(path)
    return made


class Provider:
    """The forwarder's end of the run's socket: answers "hi" to what it is sent."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.heard: list[bytes] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        path.chmod(0o777)  # the sandboxed user connects as itself
        self.server.listen()
        self.server.settimeout(30)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            connection, _ = self.server.accept()
        except OSError:
            return
        with connection:
            self.heard.append(connection.recv(100))
            connection.sendall(b"hi")

    def close(self) -> None:
        try:
            self.server.shutdown(socket.SHUT_RDWR)  # wakes the accept of a run that never came
        except OSError:
            pass
        self.server.close()
        self.thread.join(5)


NODE_RUN = """
const fs = require('fs'), net = require('net');
let sum = 0;
for (let i = 0; i < 20000000; i++) sum = (sum + i * 7) % 1000003;  // hot: the JIT compiles it
const status = fs.readFileSync('/proc/self/status', 'utf8');
const seen = ['NoNewPrivs', 'Seccomp'].map((key) => status.match(new RegExp(key + ':\\\\s*(\\\\d)'))[1]);
const provider = net.connect(process.argv[1]);
provider.on('data', (data) => {
  fs.writeFileSync('built.txt', `jit ${sum} nnp ${seen[0]} seccomp ${seen[1]} heard ${data}`);
  provider.end();
});
provider.on('error', (error) => fs.writeFileSync('built.txt', `error ${error.code}`));
provider.write('hello');
"""
SHELL_RUN = "echo built > built.txt && grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status"


def run_restricted(spec: dict, argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-I", "-c", RESTRICT, json.dumps(spec), *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def provider_run(folder: Path, spec: dict) -> tuple[subprocess.CompletedProcess, Path, Provider]:
    """An agent's run as the bot makes it for a writing role with the provider network:
    its worktree and home writable, the bot's folder hidden, the forwarder's socket in."""
    assert TOOL is not None
    config, worktree, home = make(
        folder, "bot", "bot/var/workspaces/card", "bot/var/workspaces/.agent-homes/codex"
    )
    provider = Provider(folder / "provider.sock")
    readable: tuple[Path, ...] = ()
    if NODE is not None:
        node, readable = program_paths("node", os.environ)
        argv = [node, "-e", NODE_RUN, SOCKET_INSIDE]
    else:
        argv = ["/bin/sh", "-c", SHELL_RUN]
    sandbox = Sandbox(
        tool=TOOL,
        network=NetworkAccess.PROVIDER,
        readable=readable,
        writable=(worktree, home),
        hidden=(config,),
        provider_socket=provider.path,
    )
    done = run_restricted(spec, wrap(argv, worktree, sandbox), worktree)
    provider.close()
    return done, worktree, provider


@needs_bwrap
@needs_analyze
def test_the_bots_sandbox_runs_under_the_units_restrictions(tmp_path: Path) -> None:
    spec = restrictions()
    with host_folder(tmp_path) as folder:
        done, worktree, provider = provider_run(folder, spec)
        assert done.returncode == 0, done.stderr
        probes = json.loads(done.stdout.splitlines()[0])
        assert probes["seccomp"] == 0, probes  # codex's own sandbox can install its filter
        assert probes["landlock"] in (0, 38, 95), probes  # allowed (or not in this kernel)
        assert probes["perf_event_open"] == spec["errno"], probes  # the filter is loaded
        built = (worktree / "built.txt").read_text()
        if NODE is not None:
            assert re.fullmatch(r"jit \d+ nnp 1 seccomp 2 heard hi", built), built
            assert provider.heard == [b"hello"]
        else:
            assert built == "built\n" and "NoNewPrivs:\t1" in done.stdout, done.stdout

        # The lane that opens the network: a listener of the host is reached.
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(30)
        port = listener.getsockname()[1]
        assert TOOL is not None
        sandbox = Sandbox(tool=TOOL, network=NetworkAccess.OPEN, writable=(worktree,))
        script = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        try:
            opened = run_restricted(
                spec, wrap(["/bin/bash", "-c", script], worktree, sandbox), worktree
            )
            assert "connected" in opened.stdout, opened.stderr
            listener.accept()[0].close()
        finally:
            listener.close()


@needs_bwrap
@needs_analyze
@pytest.mark.parametrize("drop", ["@mount", "AF_NETLINK"])
def test_without_what_the_unit_keeps_for_bubblewrap_the_run_fails(
    drop: str, tmp_path: Path
) -> None:
    """bubblewrap mounts the run's root (@mount) and brings up the loopback of the run's
    network namespace over netlink: without either the run does not start."""
    with host_folder(tmp_path) as folder:
        done, worktree, _ = provider_run(folder, restrictions(drop))
        assert done.returncode != 0, done.stdout
        assert not (worktree / "built.txt").exists()
        assert "bwrap" in done.stderr, done.stderr
