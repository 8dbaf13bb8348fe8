"""Both engines for the store's and the pipeline's tests.

A test that asks for `engine` (directly, or through the `database` or `store`
fixtures) runs once on SQLite and once on a real PostgreSQL: Debian's package,
installed by the test scripts when missing, started once per session on 127.0.0.1
in a temporary folder (tests/realservers/postgres.py). A server that cannot start
fails the tests; it is never a skip. `@pytest.mark.sqlite_only` keeps a test about
the SQLite file itself (its pragmas, its lock file) to SQLite.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.realservers.postgres import Postgres

ENGINES = ("sqlite", "postgresql")


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
