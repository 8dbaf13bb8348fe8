"""Both engines for the store's and the pipeline's tests.

A test that asks for `engine` (directly, or through the `database` or `store`
fixtures) runs once on SQLite and once on a real PostgreSQL: Debian's package,
installed by the test scripts when missing, started once per session on 127.0.0.1
in a temporary folder (tests/realservers/postgres.py). A server that cannot start
fails the tests; it is never a skip. `@pytest.mark.sqlite_only` keeps a test about
the SQLite file itself (its pragmas, its lock file) to SQLite.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.realservers.postgres import Postgres
from tests.serial import make_scheduler, serial_group

ENGINES = ("sqlite", "postgresql")
TEMPORARY = Path("/var/tmp/intent-board-pytest")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The tests' folders lie outside /tmp: codex sandboxes the commands its agent runs
    with bubblewrap, which mounts a fresh /tmp, so a worktree or a CODEX_HOME under /tmp
    is gone for them (with Debian's bubblewrap installed). Not inside the project either:
    some tests need a folder that is in no git repository. One folder per pytest
    process, so that runs side by side do not clear each other's; those of ended runs go."""
    # The demo's web board listens on a fixed port: only a test that asks for it (with
    # a port of its own) gets one, so tests side by side never fight over the port.
    os.environ.setdefault("INTENT_BOARD_DEMO_WEB", "off")
    if config.option.basetemp is not None:
        return
    TEMPORARY.mkdir(parents=True, exist_ok=True)
    for folder in TEMPORARY.iterdir():
        if folder.name.isdigit() and not _alive(int(folder.name)):
            shutil.rmtree(folder, ignore_errors=True)
    config.option.basetemp = str(TEMPORARY / str(os.getpid()))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """The serial tiers' groups (tests/serial.py) each on one worker, the rest spread."""
    return make_scheduler(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # getattr: a doctest or another non-function item has no fixture names
    astray = sorted(
        {
            item.nodeid.split("::", 1)[0]
            for item in items
            if "chromium" in getattr(item, "fixturenames", ())
            and serial_group(item.nodeid) != "chromium"
        }
    )
    if astray:
        raise pytest.UsageError(
            f"modules use the chromium fixture outside its group: {', '.join(astray)}; name "
            "them in tests/serial.py's SERIAL_GROUPS, so that one Chromium serves one test at a time"
        )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "engine" in metafunc.fixturenames:
        only_sqlite = metafunc.definition.get_closest_marker("sqlite_only") is not None
        metafunc.parametrize("engine", ENGINES[:1] if only_sqlite else ENGINES)


@pytest.fixture
def engine() -> str:
    """Where parametrising cannot reach (a unittest-style case such as hypothesis's
    stateful machine in tests/pipeline/test_stateful.py): SQLite."""
    return "sqlite"


@pytest.fixture(scope="session")
def postgres() -> Postgres:
    try:
        server = Postgres().start()
    except Exception as error:  # noqa: BLE001 - the reason must reach the report
        pytest.fail(f"could not start the real PostgreSQL: {error}", pytrace=False)
    yield server
    server.stop()


@dataclass(frozen=True)
class Database:
    """What `[bot] database` (and `database_password_file`) say for one test."""

    value: str | Path
    password_file: Path | None = None

    def toml(self) -> str:
        lines = f'database = "{self.value}"\n'
        if self.password_file is not None:
            lines += f'database_password_file = "{self.password_file}"\n'
        return lines


@pytest.fixture
def database(engine: str, tmp_path: Path, request: pytest.FixtureRequest) -> Database:
    if engine == "sqlite":
        return Database(tmp_path / "board.sqlite3")
    server: Postgres = request.getfixturevalue("postgres")
    return Database(server.url(server.fresh_schema()), server.password_file)
