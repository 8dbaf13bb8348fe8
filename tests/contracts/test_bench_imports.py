"""The benchmarks still name what exists: every name a bench/ script imports resolves.

Nothing runs the benchmarks in the suite (they print numbers, they take minutes), so a
move in the product broke three of them unseen (`WebBoard` left `chatbot.web` for
`chatbot.web.server`). Each script's imports are read with ast, not executed: a
benchmark's module level may start work.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.contracts.test_imports import ROOT

BENCH = ROOT / "bench"
OURS = ("chatbot", "runners", "tests", "bench")


def missing_names(script: Path) -> list[str]:
    """`module.name` for each of the project's imports in the script that does not resolve."""
    missing: list[str] = []
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not node.module.startswith(OURS):
                continue
            try:
                module = importlib.import_module(node.module)
            except ImportError as error:
                missing.append(f"{node.module} ({error})")
                continue
            for alias in node.names:
                if alias.name == "*" or hasattr(module, alias.name):
                    continue
                try:  # a submodule named in the from-list
                    importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    missing.append(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(OURS):
                    try:
                        importlib.import_module(alias.name)
                    except ImportError as error:
                        missing.append(f"{alias.name} ({error})")
    return missing


@pytest.mark.parametrize("script", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_every_name_a_benchmark_imports_exists(script: Path) -> None:
    assert missing_names(script) == []


def test_a_name_that_moved_away_is_caught(tmp_path: Path) -> None:
    planted = tmp_path / "moved.py"
    planted.write_text(
        "from chatbot.web import WebSettings\n"
        "from chatbot.web import WebBoard\n"
        "from chatbot.nowhere import anything\n"
        "import chatbot.board.moves\n"
    )
    found = missing_names(planted)
    assert found[0] == "chatbot.web.WebBoard"
    assert found[1].startswith("chatbot.nowhere (")
    assert len(found) == 2
