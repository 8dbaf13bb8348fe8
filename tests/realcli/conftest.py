"""Fixtures for the tests against the real agent CLIs: the installed binaries and the
scripted loopback model providers, one per CLI of tests/realcli/clis/. A CLI that is not
installed fails the test (scripts/test installs them); nothing here skips."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from runners.versions import TESTED
from tests.realcli import install
from tests.realcli.clis import CLIS
from tests.realcli.harness import RealHarness, start_real
from tests.realcli.providers import ScriptedModel


@pytest.fixture(scope="session")
def cli_bins() -> dict[str, Path]:
    wanted = install.missing()
    if wanted:
        pytest.fail(
            f"the real agent CLIs are not installed ({', '.join(wanted)}); "
            "scripts/test installs them (or: .venv/bin/python -m tests.realcli.install)"
        )
    return {command: install.binary(command) for command in TESTED}


@pytest.fixture
async def models() -> AsyncIterator[dict[str, ScriptedModel]]:
    """Each CLI's scripted provider, by runtime, expecting that CLI's key."""
    started = {name: cli.provider(cli.key) for name, cli in CLIS.items()}
    for model in started.values():
        await model.start()
    yield started
    for model in started.values():
        await model.stop()
    problems = {name: model.problems for name, model in started.items() if model.problems}
    assert not problems, problems


@pytest.fixture(params=list(CLIS))
def cli(request) -> str:
    """Each CLI of tests/realcli/clis/ in turn."""
    return request.param


@pytest.fixture
def model(cli: str, models: dict[str, ScriptedModel]) -> ScriptedModel:
    """The provider the parametrised CLI talks to."""
    return models[cli]


# The tests of one CLI's own behaviour name the CLI and its provider.
@pytest.fixture
def responses_model(models: dict[str, ScriptedModel]) -> ScriptedModel:
    return models["codex"]


@pytest.fixture
def messages_model(models: dict[str, ScriptedModel]) -> ScriptedModel:
    return models["claude"]


@pytest.fixture
async def pipeline(
    cli_bins, models, tmp_path
) -> AsyncIterator[Callable[..., Awaitable[RealHarness]]]:
    """Start the pipeline harness for a CLI: `await pipeline("codex", intents, **options)`."""
    opened: list[RealHarness] = []

    async def start(cli: str, intents: dict[str, str], **options: Any) -> RealHarness:
        rh = await start_real(tmp_path, cli, cli_bins, models, intents, **options)
        opened.append(rh)
        return rh

    yield start
    for rh in opened:
        await rh.h.store.close()
