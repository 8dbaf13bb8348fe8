"""Fixtures for the tests against the real agent CLIs: the installed binaries and
the two scripted loopback model providers. A CLI that is not installed fails the
test (scripts/test installs them); nothing here skips."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from runners.versions import TESTED
from tests.realcli import install
from tests.realcli.anthropic_messages import MessagesModel
from tests.realcli.harness import CLAUDE_KEY, CODEX_KEY, RealHarness, start_real
from tests.realcli.openai_responses import ResponsesModel
from tests.realcli.providers import ScriptedModel


@pytest.fixture(scope="session")
def cli_bins() -> dict[str, Path]:
    wanted = install.missing()
    if wanted:
        pytest.fail(
            f"the real agent CLIs are not installed ({', '.join(wanted)}); "
            "scripts/test installs them (or: .venv/bin/python -m tests.realcli.install)"
        )
    return {runtime: install.binary(runtime) for runtime in TESTED}


@pytest.fixture
async def responses_model() -> AsyncIterator[ResponsesModel]:
    model = ResponsesModel(key=CODEX_KEY)
    await model.start()
    yield model
    await model.stop()
    assert not model.problems, model.problems


@pytest.fixture
async def messages_model() -> AsyncIterator[MessagesModel]:
    model = MessagesModel(key=CLAUDE_KEY)
    await model.start()
    yield model
    await model.stop()
    assert not model.problems, model.problems


@pytest.fixture(params=["codex", "claude"])
def cli(request) -> str:
    return request.param


@pytest.fixture
def model(
    cli: str, responses_model: ResponsesModel, messages_model: MessagesModel
) -> ScriptedModel:
    """The provider the parametrised CLI talks to."""
    return responses_model if cli == "codex" else messages_model


@pytest.fixture
async def pipeline(
    cli_bins, responses_model, messages_model, tmp_path
) -> AsyncIterator[Callable[..., Awaitable[RealHarness]]]:
    """Start the pipeline harness for a CLI: `await pipeline("codex", intents, **options)`."""
    opened: list[RealHarness] = []

    async def start(cli: str, intents: dict[str, str], **options: Any) -> RealHarness:
        rh = await start_real(
            tmp_path, cli, cli_bins, responses_model, messages_model, intents, **options
        )
        opened.append(rh)
        return rh

    yield start
    for rh in opened:
        await rh.h.store.close()
