"""Every agent CLI the bot can run, by name: the one list of runtimes.

Each runtime is a module of this package exporting `RUNTIME` (a `Runtime` record:
its argv, its parsers, its grant syntax, what it can do, its pinned CLI). Config
validation, `chatbot check`, the pins, the pipeline and the demo read this table;
none of them compares a runtime's name (tests/contracts/test_names_compared.py).

A new runtime: its module, its name in the two lines below, its section in
config/example.toml (and the packaged copy chatbot/app/example.toml) and its pin's
row in the README; for the tests, new files only: its scripted provider and its
module in tests/realcli/clis/ (tests/realcli/test_clis.py insists on one). `chatbot
init` writes the example and `check` must then pass on a machine without the new
CLI: leave its section commented out there unless it has a scripted stand-in
(runners/scripted says what one needs).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from runners.runtimes import claude, codex, gemini, openrouter
from runners.runtimes.base import Cli, InvalidRequest, Runtime, clean_detail

# In the order configuration errors list the names ("one of codex, claude, ...").
_MODULES = (codex, claude, openrouter, gemini)

RUNTIMES: Mapping[str, Runtime] = MappingProxyType(
    {module.RUNTIME.name: module.RUNTIME for module in _MODULES}
)
#: The module that owns each name: the only place that name may be compared
#: (tests/contracts/test_names_compared.py).
HOMES: Mapping[str, str] = MappingProxyType(
    {module.RUNTIME.name: module.__name__ for module in _MODULES}
)
NAMES: tuple[str, ...] = tuple(RUNTIMES)

if len(RUNTIMES) != len(_MODULES):
    raise ImportError("two runtime modules export the same name")


def clis() -> tuple[Cli, ...]:
    """Each CLI program once (openrouter runs codex's), in the order of the runtimes."""
    found: dict[str, Cli] = {}
    for runtime in RUNTIMES.values():
        known = found.setdefault(runtime.cli.command, runtime.cli)
        if known != runtime.cli:
            raise ValueError(
                f"{runtime.cli.command} is pinned twice: {known.pin}, {runtime.cli.pin}"
            )
    return tuple(found.values())


def get_runtime(name: str) -> Runtime:
    try:
        return RUNTIMES[name]
    except KeyError:
        raise InvalidRequest(f"unknown runtime: {clean_detail(name, 40)!r}") from None
