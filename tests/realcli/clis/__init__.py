"""The agent CLIs the real-CLI tests run: one module here per registered runtime whose
CLI has a scripted provider (`<runtime>.py` exporting `CLI`, a `TestedCli`).

They are found by listing this package, in the registry's order: a runtime that brings
its module here runs every role, runner and pipeline test parametrised over `CLIS`
with no edit to any of them. A runtime without one (openrouter: codex's program with
another provider) is covered through the CLI it runs (tests/realcli/test_clis.py).
"""

from __future__ import annotations

import importlib
import pkgutil

from runners.runtimes import RUNTIMES
from tests.realcli.providers import TestedCli


def _found() -> dict[str, TestedCli]:
    found: dict[str, TestedCli] = {}
    for module in pkgutil.iter_modules(__path__):
        cli = importlib.import_module(f"{__name__}.{module.name}").CLI
        if cli.runtime not in RUNTIMES:
            raise ImportError(f"{__name__}.{module.name}: no runtime {cli.runtime!r} is registered")
        found[cli.runtime] = cli
    return {name: found[name] for name in RUNTIMES if name in found}


CLIS: dict[str, TestedCli] = _found()
