"""Contracts and prompts are runners code: they never import the chat layer."""

from __future__ import annotations

import ast
from pathlib import Path

RUNNERS = Path(__file__).resolve().parents[2] / "runners"


def test_contracts_and_prompts_do_not_import_chatbot() -> None:
    files = [*sorted((RUNNERS / "contracts").glob("*.py")), RUNNERS / "prompts.py"]
    assert len(files) > 5
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(name.split(".")[0] == "chatbot" for name in names), path
