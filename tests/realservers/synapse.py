"""A throw-away Synapse on 127.0.0.1 (SQLite, no federation) for tests.

Settings follow /work/shared/REAL_SERVERS.md: one plain-HTTP client listener on
loopback, bcrypt_rounds 4 (a login costs 15 ms instead of 300 ms), test traffic
exempt from rate limits, nothing that talks to the outside.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import proc

SERVER_NAME = "localhost"

_UNLIMITED = {"per_second": 10000, "burst_count": 10000}


def render_config(base: Path, port: int, shared_secret: str, macaroon: str) -> dict[str, Any]:
    return {
        "server_name": SERVER_NAME,
        "pid_file": str(base / "homeserver.pid"),
        "public_baseurl": f"http://127.0.0.1:{port}/",
        "listeners": [
            {
                "port": port,
                "bind_addresses": ["127.0.0.1"],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(base / "homeserver.db")}},
        "log_config": str(base / "log.yaml"),
        "media_store_path": str(base / "media_store"),
        "signing_key_path": str(base / "signing.key"),
        "registration_shared_secret": shared_secret,
        "enable_registration": False,
        "macaroon_secret_key": macaroon,
        "form_secret": macaroon + "-form",
        "report_stats": False,
        "enable_metrics": False,
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "federation_domain_whitelist": [],
        "presence": {"enabled": False},
        "url_preview_enabled": False,
        "bcrypt_rounds": 4,
        "rc_message": _UNLIMITED,
        "rc_registration": _UNLIMITED,
        "rc_login": {
            "address": _UNLIMITED,
            "account": _UNLIMITED,
            "failed_attempts": _UNLIMITED,
        },
        "rc_joins": {"local": _UNLIMITED, "remote": _UNLIMITED},
        "rc_joins_per_room": _UNLIMITED,
        "rc_invites": {
            "per_room": _UNLIMITED,
            "per_user": _UNLIMITED,
            "per_issuer": _UNLIMITED,
        },
        "rc_admin_redaction": _UNLIMITED,
        # Synapse's defaults allow 10 rooms and then one a minute: past the tenth room an
        # encrypted-room fixture waited 61 s for its 429 to pass (nine such tests made a
        # third of the integration tests' time). Media and key requests alike.
        "rc_room_creation": _UNLIMITED,
        "rc_media_create": _UNLIMITED,
        "rc_key_requests": _UNLIMITED,
        "rc_profile": _UNLIMITED,
        "rc_delayed_event_mgmt": _UNLIMITED,
    }


def render_log_config(base: Path) -> str:
    return f"""version: 1
formatters:
  precise:
    format: '%(asctime)s - %(name)s - %(lineno)d - %(levelname)s - %(request)s - %(message)s'
handlers:
  file:
    class: logging.FileHandler
    formatter: precise
    filename: {base / "homeserver.log"}
    encoding: utf8
loggers:
  synapse.storage.SQL:
    level: WARNING
root:
  level: WARNING
  handlers: [file]
disable_existing_loggers: false
"""


@dataclass
class Synapse:
    base: Path
    port: int
    shared_secret: str
    macaroon: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def config_path(self) -> Path:
        return self.base / "homeserver.yaml"

    def write_config(self) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        (self.base / "media_store").mkdir(exist_ok=True)
        # JSON is valid YAML; no PyYAML round trip needed.
        cfg = render_config(self.base, self.port, self.shared_secret, self.macaroon)
        self.config_path.write_text(json.dumps(cfg, indent=2))
        (self.base / "log.yaml").write_text(render_log_config(self.base))
        key = self.base / "signing.key"
        if not key.exists():
            # signedjson comes with synapse; generating here saves the 1.4 s
            # `--generate-config` run.
            from signedjson.key import generate_signing_key, write_signing_keys

            with key.open("w") as f:
                write_signing_keys(f, [generate_signing_key("a_test")])

    def start(self, *, detach: bool) -> int:
        if importlib.util.find_spec("synapse") is None:
            raise RuntimeError(
                f"matrix-synapse is not installed in {sys.prefix}; "
                "run `.venv/bin/pip install -e '.[servers]'`"
            )
        proc_ = proc.spawn(
            [sys.executable, "-m", "synapse.app.homeserver", "-c", str(self.config_path)],
            log=self.base / "homeserver.stdout.log",
            detach=detach,
        )
        try:
            proc.wait_for_http(f"{self.url}/health", proc_, timeout=60)
        except Exception:
            proc.terminate(proc_.pid)
            raise RuntimeError(
                f"synapse did not become healthy on {self.url}; log tail:\n"
                + proc.tail(self.base / "homeserver.log")
                + proc.tail(self.base / "homeserver.stdout.log")
            ) from None
        return proc_.pid

    # -- HTTP helpers (stdlib only: the CLI must not need an event loop) --

    def _request(
        self, method: str, path: str, body: dict | None = None, token: str | None = None
    ) -> tuple[int, dict]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def register(self, user: str, password: str, display_name: str) -> None:
        """Create a user through the shared-secret admin API; existing is fine."""
        _, nonce = self._request("GET", "/_synapse/admin/v1/register")
        mac = hmac.new(self.shared_secret.encode(), digestmod=hashlib.sha1)
        mac.update(b"\x00".join(p.encode() for p in (nonce["nonce"], user, password, "notadmin")))
        body = {
            "nonce": nonce["nonce"],
            "username": user,
            "password": password,
            "displayname": display_name,
            "admin": False,
            "mac": mac.hexdigest(),
        }
        status, answer = self._request("POST", "/_synapse/admin/v1/register", body)
        if status == 200 or answer.get("errcode") == "M_USER_IN_USE":
            return
        raise RuntimeError(f"registering {user} failed: {status} {answer}")

    def login(self, user: str, password: str) -> str:
        status, answer = self._request(
            "POST",
            "/_matrix/client/v3/login",
            {
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": user},
                "password": password,
                "initial_device_display_name": "realservers setup",
            },
        )
        if status != 200:
            raise RuntimeError(f"login {user} failed: {status} {answer}")
        return answer["access_token"]

    def logout(self, token: str) -> None:
        self._request("POST", "/_matrix/client/v3/logout", {}, token=token)

    def ensure_room(self, token: str, alias_local: str, name: str) -> str:
        """A public room with a fixed alias, created once; returns its room id."""
        alias = f"#{alias_local}:{SERVER_NAME}"
        status, answer = self._request(
            "GET", "/_matrix/client/v3/directory/room/" + urllib.parse.quote(alias), token=token
        )
        if status == 200:
            return answer["room_id"]
        status, answer = self._request(
            "POST",
            "/_matrix/client/v3/createRoom",
            {
                "room_alias_name": alias_local,
                "name": name,
                "preset": "public_chat",
                "visibility": "private",
            },
            token=token,
        )
        if status != 200:
            raise RuntimeError(f"createRoom {alias} failed: {status} {answer}")
        return answer["room_id"]
