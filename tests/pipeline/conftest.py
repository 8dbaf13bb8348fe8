from __future__ import annotations

import pytest

from tests.pipeline import harness


@pytest.fixture(autouse=True)
def engine_of_the_harness(engine, database, monkeypatch):
    """Every pipeline test runs on SQLite and on PostgreSQL (tests/conftest.py)."""
    if engine == "postgresql":  # SQLite: the harness's own file beside its repository
        monkeypatch.setattr(harness, "DATABASE", database)


@pytest.fixture
async def harnesses():
    opened = []
    yield opened
    for harness_ in opened:
        await harness_.store.close()
