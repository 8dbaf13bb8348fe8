"""No registered name is tested as a string outside its own module, read from the code.

What a runtime does is on its record (runners/runtimes/registry.py): callers ask the
record (`bounds_turns`, `key_file`, `tool_rules`, ...), never `runtime == "claude"`.
Every module of chatbot/ and runners/ is parsed with ast; a string literal equal to a
registered name fails the test where it is

- compared: `==`, `!=`, `in`, `not in`, a `match` case;
- a key: of a dict literal, a subscript, `.get()`, `.pop()`, `.setdefault()`;
- listed: an element of a tuple, list or set literal (a hand-kept list of names, or
  the right side of an `in`);

outside the module that owns the name (its record's module, or package) and the
modules that declare the names (the registry). The names come from the registries
themselves, not from a list here: a new runtime is covered the moment it is
registered. The chat networks (chatbot/transports/networks.py) are the second registry. A deliberate violation of each kind is caught (the check is tested too).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from chatbot.transports import networks as network_registry
from runners.runtimes import registry as runtime_registry
from tests.contracts.test_imports import PACKAGES, ROOT, module_name

LOOKUPS = frozenset({"get", "pop", "setdefault"})


@dataclass(frozen=True)
class Registry:
    """One kind of registered name: which module (or package) owns each name."""

    what: str
    homes: Mapping[str, str]
    #: Modules where every name may appear: where the names are declared.
    declared_in: frozenset[str] = frozenset()

    def may_use(self, module: str, name: str) -> bool:
        home = self.homes[name]
        return module in self.declared_in or module == home or module.startswith(home + ".")


REGISTRIES: tuple[Registry, ...] = (
    Registry("runtime", runtime_registry.HOMES, frozenset({runtime_registry.__name__})),
    Registry("chat network", network_registry.homes(), frozenset({network_registry.__name__})),
)


@dataclass(frozen=True, order=True)
class Finding:
    module: str
    line: int
    name: str
    how: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.name!r} {self.how}"


def _use(node: ast.Constant, parents: Mapping[ast.AST, ast.AST]) -> str | None:
    """How a string literal is used, when it is a use this check forbids."""
    parent = parents.get(node)
    if isinstance(parent, ast.Tuple | ast.List | ast.Set):
        holder = parents.get(parent)
        return "compared" if isinstance(holder, ast.Compare) else "listed"
    if isinstance(parent, ast.Compare):
        return "compared"
    if isinstance(parent, ast.MatchValue):
        return "matched in a case"
    if isinstance(parent, ast.Dict) and any(key is node for key in parent.keys):
        return "used as a dict key"
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        return "used as a subscript"
    if (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr in LOOKUPS
        and parent.args
        and parent.args[0] is node
    ):
        return f"looked up with .{parent.func.attr}()"
    return None


def findings(source: str, module: str, registry: Registry) -> Iterator[Finding]:
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        name = node.value
        if name not in registry.homes or registry.may_use(module, name):
            continue
        how = _use(node, parents)
        if how is not None:
            yield Finding(module, node.lineno, name, f"{how} outside {registry.homes[name]}")


def modules() -> Iterator[tuple[str, str]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield module_name(path), path.read_text(encoding="utf-8")


def test_no_registered_name_is_compared_outside_its_module() -> None:
    found = sorted(
        finding
        for registry in REGISTRIES
        for module, source in modules()
        for finding in findings(source, module, registry)
    )
    assert [str(finding) for finding in found] == []


def test_the_names_are_the_registrys() -> None:
    # Generated, not hand-kept: every registered runtime is checked, each in its own module.
    runtimes, networks = REGISTRIES
    assert set(runtimes.homes) == set(runtime_registry.RUNTIMES)
    assert set(networks.homes) == set(network_registry.NETWORKS)
    known = {name for name, _ in modules()}
    assert all(home in known for home in runtimes.homes.values())
    assert runtimes.homes["claude"] == "runners.runtimes.claude"


VIOLATIONS = """
def f(runtime, config, table):
    if runtime == "claude":
        pass
    if "claude" != runtime:
        pass
    if runtime in ("codex", "x"):
        pass
    if runtime not in ["codex"]:
        pass
    match runtime:
        case "openrouter":
            pass
    config.runtimes.get("codex")
    table.pop("codex")
    table.setdefault("codex", 1)
    WITH_COST = {"claude"}
    return {"claude": 1}, table["openrouter"]
"""
FINE = """
def f(runtime, record):
    NAME = "claude"
    print("claude", f"{runtime}")
    log("claude gave no answer")
    return record.bounds_turns, scripted_cli("codex")
"""


def test_the_check_catches_a_deliberate_violation_of_each_kind() -> None:
    runtimes, _ = REGISTRIES
    caught = list(findings(VIOLATIONS, "chatbot.pipeline.building", runtimes))
    hows = {finding.how.split(" outside ")[0] for finding in caught}
    assert hows == {
        "compared",
        "matched in a case",
        "looked up with .get()",
        "looked up with .pop()",
        "looked up with .setdefault()",
        "listed",
        "used as a dict key",
        "used as a subscript",
    }
    assert len(caught) == 11
    assert [f.line for f in caught if f.how.startswith("compared")] == [3, 5, 7, 9]
    assert list(findings(FINE, "chatbot.pipeline.building", runtimes)) == []
    # The owner of a name may compare it; another runtime's module may not.
    at_home = list(findings(VIOLATIONS, "runners.runtimes.claude", runtimes))
    assert at_home and {f.name for f in at_home} == {"codex", "openrouter"}
    assert list(findings(VIOLATIONS, runtime_registry.__name__, runtimes)) == []


def test_a_name_registered_tomorrow_is_checked_with_no_edit_here() -> None:
    tomorrow = Registry("runtime", {"gemini": "runners.runtimes.gemini"})
    caught = list(findings('ok = runtime == "gemini"\n', "chatbot.app.check", tomorrow))
    assert [str(f) for f in caught] == [
        "chatbot.app.check:1: 'gemini' compared outside runners.runtimes.gemini"
    ]
    # A package owns its names in every module inside it (a chat network's package).
    network = Registry("network", {"matrix": "chatbot.transports.matrix"})
    inside = 'if kind == "matrix": pass\n'
    assert list(findings(inside, "chatbot.transports.matrix.crypto", network)) == []
    assert len(list(findings(inside, "chatbot.chat.replies", network))) == 1


def test_the_chat_networks_are_held_the_same_way() -> None:
    _, networks = REGISTRIES
    seen = 'html = markdown(t) if transport == "matrix" else None\nif kind in ("xmpp",): pass\n'
    caught = list(findings(seen, "chatbot.notify.notifier", networks))
    assert [(f.line, f.name) for f in caught] == [(1, "matrix"), (2, "xmpp")]
    assert list(findings(seen, "chatbot.transports.matrix.transport", networks))[0].name == "xmpp"
