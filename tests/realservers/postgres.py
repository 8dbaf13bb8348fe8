"""A throw-away PostgreSQL (Debian's `postgresql` package) on 127.0.0.1.

The server runs as our child in the foreground (`postgres -D DIR`), in a temporary
data folder, with password authentication over TCP only (no socket outside the
folder), so the bot's `password_file` path is exercised like in production.
PostgreSQL refuses to run as root: as root it runs as the `postgres` user the
package creates. For tests durability is off (fsync, full-page writes): the data is
thrown away after the run, and the tests measure behaviour, not disks; benchmarks
ask for `durable=True`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import apt, proc

USER = "chatbot"
DATABASE = "chatbot"
START_ATTEMPTS = 3


def _bindir() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def ensure_installed() -> Path:
    """The folder with initdb and postgres; installs Debian's package when missing (root)."""
    apt.install("postgresql", lambda: _bindir() is not None, "initdb")
    bindir = _bindir()
    assert bindir is not None
    return bindir


def _as_user() -> tuple[list[str], int | None, int | None]:
    """(argv prefix, uid, gid) to run the server as someone it accepts."""
    if os.geteuid() != 0:
        return [], None, None
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        raise RuntimeError("running as root, and the `postgres` user is missing") from None
    return ["runuser", "-u", "postgres", "--"], account.pw_uid, account.pw_gid


@dataclass
class Postgres:
    """One server: `start()`, `url(schema)` for a fresh schema per test, `stop()`."""

    durable: bool = False
    base: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="chatbot-pg-")))
    port: int = 0
    password: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    pid: int | None = None

    @property
    def data(self) -> Path:
        return self.base / "data"

    @property
    def password_file(self) -> Path:
        return self.base / "password"

    def start(self) -> Postgres:
        bindir = ensure_installed()
        prefix, uid, gid = _as_user()
        self.base.mkdir(parents=True, exist_ok=True)
        self.password_file.write_text(self.password + "\n")
        self.password_file.chmod(0o644 if uid is not None else 0o600)
        if uid is not None:
            # The server's user must reach its folder (mkdtemp makes it 0700 for root).
            os.chown(self.base, uid, gid or -1)
        subprocess.run(
            [
                *prefix,
                str(bindir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                USER,
                f"--pwfile={self.password_file}",
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
        )
        # The port is free when picked, but any process on the box may take it (an
        # outgoing connection's local port, another worker's server) before the server
        # binds it: then the server exits, and the next try takes another port.
        failures: list[str] = []
        for _attempt in range(START_ATTEMPTS):
            try:
                self._serve(bindir, prefix)
                return self
            except Exception as error:  # noqa: BLE001 - each try's reason is reported
                failures.append(f"{error}\n{proc.tail(self.base / 'postgres.log')}")
                proc.terminate(self.pid)
                self.pid = None
        self.stop()
        raise RuntimeError(
            f"postgres did not start in {START_ATTEMPTS} tries; each try's reason and log tail:\n"
            + "\n".join(failures)
        )

    def _serve(self, bindir: Path, prefix: list[str]) -> None:
        self.port = proc.free_port()
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.base),
            "max_connections": "300",
            "shared_buffers": "128MB",
            # durable: what a real server does, but without waiting for the flush of
            # each commit (SQLite's WAL with synchronous=NORMAL makes the same trade).
            "fsync": "on" if self.durable else "off",
            "synchronous_commit": "off",
            "full_page_writes": "on" if self.durable else "off",
            "log_min_messages": "warning",
        }
        options = [f"-c{key}={value}" for key, value in settings.items()]
        server = proc.spawn(
            [*prefix, str(bindir / "postgres"), "-D", str(self.data), *options],
            log=self.base / "postgres.log",
            detach=False,
        )
        self.pid = server.pid
        # Its own socket file, not the TCP port: a port taken by another listener would
        # answer a connection for it.
        proc.wait_for_path(self.base / f".s.PGSQL.{self.port}", server, timeout=30)
        self._psql(f"CREATE DATABASE {DATABASE}")

    def _psql(self, sql: str, database: str = "postgres") -> str:
        env = dict(os.environ, PGPASSWORD=self.password)
        done = subprocess.run(
            ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, "-d", database]
            + ["-v", "ON_ERROR_STOP=1", "-Atqc", sql],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql {sql!r}: {done.stderr.strip()}")
        return done.stdout

    def fresh_schema(self) -> str:
        """A new, empty schema in the test database; what a test's store lives in."""
        name = "t_" + secrets.token_hex(6)
        self._psql(f"CREATE SCHEMA {name}", DATABASE)
        return name

    def url(self, schema: str | None = None) -> str:
        """The bot's `database` value (no password: that comes from password_file)."""
        url = f"postgresql://{USER}@127.0.0.1:{self.port}/{DATABASE}"
        if schema:
            url += f"?options=-csearch_path%3D{schema}"
        return url

    def stop(self) -> None:
        proc.terminate(self.pid)
        self.pid = None
        with contextlib.suppress(OSError):
            shutil.rmtree(self.base)
