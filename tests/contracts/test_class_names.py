"""One name per concept: no two top-level classes of chatbot/ and runners/ share a name.

Two classes with one name are either one concept written twice (keep one, import it)
or two concepts that a reader, a search or an import can mix up (rename one so that
each name says what it is). Every module is parsed with ast; a class counts where a
module defines it at its top level (also under a top-level `if` or `try`, such as
`if TYPE_CHECKING:`). A private class (`_Name`) is never imported and is read only in
its own module, so it does not count.

DUPLICATES lists the names still shared, each with why; a name renamed since must
leave the list (the check fails on a stale entry), and a deliberate violation is
caught (the check is tested too).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping

from tests.contracts.test_imports import PACKAGES, ROOT, module_name

#: Shared names that stay, and why: none since issue 39 point 4 (20 when counted). A new
#: entry needs a reason a reader would accept; the list is not a licence.
DUPLICATES: Mapping[str, str] = {}


def classes_of(tree: ast.Module) -> Iterator[ast.ClassDef]:
    """The module's top-level classes, those under a top-level `if` or `try` too."""
    body: list[ast.stmt] = list(tree.body)
    while body:
        node = body.pop(0)
        if isinstance(node, ast.ClassDef):
            yield node
        elif isinstance(node, ast.If):
            body += [*node.body, *node.orelse]
        elif isinstance(node, ast.Try):
            body += [*node.body, *node.orelse, *node.finalbody]
            body += [stmt for handler in node.handlers for stmt in handler.body]


def where_defined(sources: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Public class name -> the `module:line`s that define it, from (module, source) pairs."""
    found: dict[str, list[str]] = {}
    for module, source in sources:
        for node in classes_of(ast.parse(source)):
            if not node.name.startswith("_"):
                found.setdefault(node.name, []).append(f"{module}:{node.lineno}")
    return found


def shared(found: Mapping[str, list[str]]) -> dict[str, list[str]]:
    return {name: places for name, places in found.items() if len(places) > 1}


def _sources() -> Iterator[tuple[str, str]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield module_name(path), path.read_text(encoding="utf-8")


def test_no_two_classes_share_a_name() -> None:
    clashes = shared(where_defined(_sources()))
    unexplained = {name: places for name, places in clashes.items() if name not in DUPLICATES}
    assert not unexplained, "\n".join(
        f"class {name} is defined in {', '.join(places)}: keep one, or rename so each says what it is"
        for name, places in sorted(unexplained.items())
    )


def test_every_listed_duplicate_is_still_one() -> None:
    clashes = shared(where_defined(_sources()))
    stale = sorted(set(DUPLICATES) - set(clashes))
    assert not stale, f"no longer shared, take them off DUPLICATES: {stale}"


def test_the_check_catches_a_deliberate_violation() -> None:
    sources = [
        ("chatbot.one", "class Said:\n    pass\n\nclass _Private:\n    pass\n"),
        (
            "chatbot.two",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    class Said: ...\n",
        ),
        ("runners.three", "class Said(Exception):\n    pass\n\nclass _Private:\n    pass\n"),
        ("runners.four", "def f():\n    class Said: ...\n"),
    ]
    found = where_defined(sources)
    assert shared(found) == {"Said": ["chatbot.one:1", "chatbot.two:3", "runners.three:1"]}
    assert where_defined([("chatbot.five", "class Only:\n    pass\n")]) == {
        "Only": ["chatbot.five:1"]
    }


def test_the_tree_is_read() -> None:
    # A check that reads no file would pass anything.
    found = where_defined(_sources())
    assert found["Identity"] == [
        f"chatbot.transports.events:{_line('chatbot/transports/events.py', 'Identity')}"
    ]
    assert any(place.startswith("runners.") for places in found.values() for place in places)


def _line(path: str, name: str) -> int:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return next(node.lineno for node in classes_of(tree) if node.name == name)
