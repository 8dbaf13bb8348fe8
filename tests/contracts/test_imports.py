"""The import rules of the house, read from the code itself.

- `runners` never imports `chatbot` (the bot uses the library, not the reverse);
- no module imports another into a cycle, however long;
- a deliberate violation of either is caught (the checks are tested too).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("chatbot", "runners")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Modules of ours that `path` imports, type-checking imports included: a cycle
    hidden behind TYPE_CHECKING is still two modules that cannot be read apart."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            # `from pkg import mod` imports the module pkg.mod where there is one.
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name.split(".")[0] in PACKAGES}


def import_graph() -> dict[str, set[str]]:
    files = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    modules = {module_name(p): p for p in files}
    return {
        name: {target for target in imports_of(path) if target in modules and target != name}
        for name, path in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted(
        (source, target)
        for source, targets in graph.items()
        for target in targets
        if source.startswith("runners") and target.startswith("chatbot")
    )


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    # A package's __init__ re-exporting its modules is not a cycle of meaning.
    return {
        source: {t for t in targets if not source.startswith(t + ".")}
        for source, targets in graph.items()
    }


def test_runners_never_import_chatbot() -> None:
    graph = import_graph()
    assert len(graph) > 40
    assert upward(graph) == []


def test_there_is_no_import_cycle() -> None:
    assert cycles(_without_package_inits(import_graph())) == []


def test_the_checks_catch_a_deliberate_violation() -> None:
    graph = import_graph()
    graph["runners.process"] = graph["runners.process"] | {"chatbot.board"}
    graph["chatbot.domain.phases"] = graph["chatbot.domain.phases"] | {"chatbot.domain.roles"}
    assert upward(graph) == [("runners.process", "chatbot.board")]
    assert ["chatbot.domain.phases", "chatbot.domain.roles"] in cycles(graph)
