"""The import rules of the house, read from the code itself.

- each room imports only the rooms below it (RULES): `runners` never imports
  `chatbot`; chat, the worker and the transports never touch the store (chat and
  the worker go through the board); nothing imports the app that wires it all;
- no module imports another into a cycle, however long;
- a deliberate violation of each is caught (the checks are tested too).
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


# room -> the rooms it may import (besides itself). A room is the longest prefix
# listed; `runners` is the library, `chatbot.app` the top that may use everything.
RULES: dict[str, set[str]] = {
    "runners": set(),
    "chatbot.domain": {"runners"},
    # The chat networks' records (library-free) say how identities are written.
    "chatbot.config": {
        "chatbot.config_file",
        "chatbot.secret_files",
        "chatbot.domain",
        "chatbot.transports.networks",
        "runners",
    },
    "chatbot.config_file": {"runners"},
    "chatbot.secret_files": set(),
    # What a log line is about (card, job, role, transport): set by chat and the worker.
    "chatbot.log_context": set(),
    "chatbot.store": {"chatbot.domain", "runners"},
    "chatbot.board": {"chatbot.store", "chatbot.domain", "runners"},
    "chatbot.transports": set(),
    "chatbot.notify": {
        "chatbot.board",
        "chatbot.store",
        "chatbot.domain",
        "chatbot.transports",
        "runners",
    },
    "chatbot.chat": {
        "chatbot.board",
        "chatbot.domain",
        "chatbot.config",
        "chatbot.notify.format",
        "chatbot.transports",
        "chatbot.log_context",
        "runners",
    },
    "chatbot.pipeline": {
        "chatbot.board",
        "chatbot.domain",
        "chatbot.config",
        "chatbot.log_context",
        "runners",
    },
    "chatbot.web": {
        "chatbot.board",
        "chatbot.domain",
        "chatbot.config",
        "chatbot.secret_files",
        "chatbot.notify.format",
        "runners",
    },
    "chatbot.app": {"chatbot", "runners"},
    "chatbot.__main__": {"chatbot.app"},
    "chatbot": set(),
}


def room_of(module: str) -> str:
    """The room a module is in; `chatbot` itself is only the package's own __init__."""
    rooms = [r for r in RULES if module == r or (r != "chatbot" and module.startswith(r + "."))]
    assert rooms, f"{module} is in no room of RULES: add its room"
    return max(rooms, key=len)


def upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports that leave the importing room for one it may not use."""
    wrong = []
    for source, targets in graph.items():
        room = room_of(source)
        allowed = {room, *RULES[room]}
        for target in targets:
            if not any(target == ok or target.startswith(ok + ".") for ok in allowed):
                wrong.append((source, target))
    return sorted(wrong)


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    # A package's __init__ re-exporting its modules is not a cycle of meaning.
    return {
        source: {t for t in targets if not source.startswith(t + ".")}
        for source, targets in graph.items()
    }


def test_every_room_imports_only_the_rooms_below_it() -> None:
    graph = import_graph()
    assert len(graph) > 40
    assert upward(graph) == []


def test_there_is_no_import_cycle() -> None:
    assert cycles(_without_package_inits(import_graph())) == []


def test_the_checks_catch_a_deliberate_violation() -> None:
    graph = import_graph()
    graph["runners.process"] = graph["runners.process"] | {"chatbot.board"}
    graph["chatbot.chat.handlers"] = graph["chatbot.chat.handlers"] | {"chatbot.store.cards"}
    graph["chatbot.transports.xmpp.transport"] |= {"chatbot.store.kv"}
    graph["chatbot.config.bot"] |= {"chatbot.transports.base"}
    graph["chatbot.board.moves"] = graph["chatbot.board.moves"] | {"chatbot.app.serve"}
    graph["chatbot.domain.phases"] = graph["chatbot.domain.phases"] | {"chatbot.domain.roles"}
    assert upward(graph) == [
        ("chatbot.board.moves", "chatbot.app.serve"),
        ("chatbot.chat.handlers", "chatbot.store.cards"),
        ("chatbot.config.bot", "chatbot.transports.base"),
        ("chatbot.transports.xmpp.transport", "chatbot.store.kv"),
        ("runners.process", "chatbot.board"),
    ]
    assert ["chatbot.domain.phases", "chatbot.domain.roles"] in cycles(graph)
