"""Real Prosody and Synapse on loopback, for integration tests and for trying the bot.

One folder holds everything (configs, data, logs) plus `servers.json`, which
says how to reach the servers and as whom. Used by `scripts/servers` (CLI) and
by the session fixture in tests/integration/conftest.py, so both start the
servers the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import proc
from .prosody import (
    DOMAIN,
    HIDDEN_MUC_DOMAIN,
    MUC_DOMAIN,
    UPLOAD_DOMAIN,
    Prosody,
    ensure_installed,
    upload_url,
)
from .synapse import SERVER_NAME, Synapse

__all__ = ["Servers", "ensure_installed", "load_info", "ACCOUNTS"]

JSON_NAME = "servers.json"
ACCOUNTS = ("bot", "owner", "stranger", "requester")
DISPLAY_NAMES = {
    "bot": "Board Bot",
    "owner": "Owner",
    "stranger": "Stranger",
    "requester": "Requester",
}
ROOM_LOCAL = "ops"


def load_info(path: str | Path) -> dict[str, Any]:
    """Read a servers.json (the file, or the folder that holds it)."""
    p = Path(path)
    if p.is_dir():
        p = p / JSON_NAME
    return json.loads(p.read_text())


@contextlib.contextmanager
def given_or_started(servers_json: str | Path | None, folder: Path) -> Iterator[dict[str, Any]]:
    """The servers a `servers.json` describes, or fresh ones in `folder`, stopped after."""
    if servers_json:
        yield load_info(servers_json)
        return
    servers = Servers(folder)
    try:
        yield servers.start()
    finally:
        servers.stop()


def _password() -> str:
    return secrets.token_urlsafe(12)


@dataclass
class Servers:
    """Start, stop and describe the two servers living under `base`."""

    base: Path
    info: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.base = Path(self.base).resolve()
        path = self.base / JSON_NAME
        if path.exists():
            self.info = json.loads(path.read_text())

    @property
    def json_path(self) -> Path:
        return self.base / JSON_NAME

    def _save(self) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        tmp = self.json_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.info, indent=2) + "\n")
        tmp.chmod(0o600)  # it holds the test accounts' passwords
        tmp.replace(self.json_path)

    # -- description -----------------------------------------------------

    def _pick_port(self, section: dict[str, Any]) -> int:
        """Keep the old port across restarts (clients have it) unless something else took it."""
        port = section.get("port")
        if port and (proc.alive(section.get("pid")) or proc.port_is_free(port)):
            return port
        return proc.free_port()

    def _pick_http_port(self, x: dict[str, Any]) -> int:
        """The upload service's port: kept like the client port, never the same as it."""
        port = x.get("http_port")
        if port and port != x["port"] and (proc.alive(x.get("pid")) or proc.port_is_free(port)):
            return port
        while (port := proc.free_port()) == x["port"]:
            pass
        return port

    def _describe(self) -> None:
        """Fill in ports, accounts and passwords once; later runs reuse them."""
        x = self.info.setdefault("xmpp", {})
        x["host"] = "127.0.0.1"
        x["port"] = self._pick_port(x)
        x["domain"] = DOMAIN
        x["muc_domain"] = MUC_DOMAIN
        x["hidden_muc_domain"] = HIDDEN_MUC_DOMAIN
        x["http_port"] = self._pick_http_port(x)
        x["upload_domain"] = UPLOAD_DOMAIN
        x["upload_url"] = upload_url(x["http_port"])
        accounts = x.setdefault("accounts", {})
        for name in ACCOUNTS:
            acc = accounts.setdefault(name, {"password": _password()})
            acc["jid"] = f"{name}@{DOMAIN}"
            acc["nick"] = name
        x["rooms"] = {
            "public": f"{ROOM_LOCAL}@{MUC_DOMAIN}",
            "hidden": f"{ROOM_LOCAL}@{HIDDEN_MUC_DOMAIN}",
        }
        x["data_dir"] = str(self.base / "prosody")

        m = self.info.setdefault("matrix", {})
        m["port"] = self._pick_port(m)
        m["homeserver"] = f"http://127.0.0.1:{m['port']}"
        m["server_name"] = SERVER_NAME
        m.setdefault("registration_shared_secret", secrets.token_hex(16))
        m.setdefault("macaroon_secret_key", secrets.token_hex(16))
        accounts = m.setdefault("accounts", {})
        for name in ACCOUNTS:
            acc = accounts.setdefault(name, {"password": _password()})
            acc["user_id"] = f"@{name}:{SERVER_NAME}"
            acc["display_name"] = DISPLAY_NAMES[name]
        m.setdefault("rooms", {})
        m["data_dir"] = str(self.base / "synapse")
        self.info["version"] = 1
        self.info["base_dir"] = str(self.base)

    @property
    def prosody(self) -> Prosody:
        x = self.info["xmpp"]
        return Prosody(self.base / "prosody", x["port"], x["http_port"])

    @property
    def synapse(self) -> Synapse:
        m = self.info["matrix"]
        return Synapse(
            self.base / "synapse",
            m["port"],
            m["registration_shared_secret"],
            m["macaroon_secret_key"],
        )

    # -- lifecycle -------------------------------------------------------

    def start(self, *, detach: bool = False) -> dict[str, Any]:
        """Start whatever is not running yet, create accounts and rooms; idempotent."""
        t0 = time.monotonic()
        self._describe()
        self._save()
        with ThreadPoolExecutor(2) as pool:
            fx = pool.submit(self._start_prosody, detach)
            fm = pool.submit(self._start_synapse, detach)
            errors = []
            for f in (fx, fm):
                try:
                    f.result()
                except Exception as e:  # noqa: BLE001 - report both servers' failures
                    errors.append(e)
        self._save()
        if errors:
            self.stop()
            raise RuntimeError("; ".join(str(e) for e in errors))
        self.timings["start_total"] = time.monotonic() - t0
        return self.info

    def _start_prosody(self, detach: bool) -> None:
        t0 = time.monotonic()
        ensure_installed()
        x = self.info["xmpp"]
        server = self.prosody
        if not proc.alive(x.get("pid")):
            server.write_config()
            for name, acc in x["accounts"].items():
                server.register(name, acc["password"])
            x["pid"] = server.start(detach=detach)
        owner = x["accounts"]["owner"]
        asyncio.run(
            _create_xmpp_rooms(
                x["host"], x["port"], owner["jid"], owner["password"], list(x["rooms"].values())
            )
        )
        self.timings["prosody"] = time.monotonic() - t0

    def start_prosody(self, *, detach: bool = False) -> None:
        """(Re)start only Prosody, same port and data (the reconnect test needs this)."""
        x = self.info["xmpp"]
        if proc.alive(x.get("pid")):
            return
        x["pid"] = self.prosody.start(detach=detach)
        self._save()

    def stop_prosody(self) -> None:
        x = self.info.get("xmpp", {})
        proc.terminate(x.get("pid"))
        x["pid"] = None
        self._save()

    def start_synapse(self, *, detach: bool = False) -> None:
        """(Re)start only Synapse, same port and data."""
        m = self.info["matrix"]
        if proc.alive(m.get("pid")):
            return
        m["pid"] = self.synapse.start(detach=detach)
        self._save()

    def stop_synapse(self) -> None:
        m = self.info.get("matrix", {})
        proc.terminate(m.get("pid"))
        m["pid"] = None
        self._save()

    def _start_synapse(self, detach: bool) -> None:
        t0 = time.monotonic()
        m = self.info["matrix"]
        server = self.synapse
        if not proc.alive(m.get("pid")):
            server.write_config()
            m["pid"] = server.start(detach=detach)
        for name, acc in m["accounts"].items():
            server.register(name, acc["password"], acc["display_name"])
        owner = m["accounts"]["owner"]
        token = server.login("owner", owner["password"])
        try:
            room_id = server.ensure_room(token, ROOM_LOCAL, "ops")
        finally:
            server.logout(token)
        m["rooms"] = {"public": {"room_id": room_id, "alias": f"#{ROOM_LOCAL}:{SERVER_NAME}"}}
        self.timings["synapse"] = time.monotonic() - t0

    def stop(self) -> None:
        """TERM both servers and wait until they are gone."""
        with ThreadPoolExecutor(2) as pool:
            for section in ("xmpp", "matrix"):
                s = self.info.get(section, {})
                pool.submit(proc.terminate, s.get("pid"))
        for section in ("xmpp", "matrix"):
            if section in self.info:
                self.info[section]["pid"] = None
        if self.info:
            self._save()

    def status(self) -> dict[str, bool]:
        return {
            section: proc.alive(self.info.get(section, {}).get("pid"))
            for section in ("xmpp", "matrix")
        }


async def _create_xmpp_rooms(
    host: str, port: int, jid: str, password: str, rooms: list[str]
) -> None:
    from .xmpp_setup import create_rooms

    await create_rooms(host, port, jid, password, rooms)
