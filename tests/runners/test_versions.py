"""The pinned CLI versions: parsing `--version`, comparing, and the documentation listing
them (docs/agents.md, the page of the agent CLIs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runners import versions
from runners.versions import TESTED, parse_version, verdict

README = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


@pytest.mark.parametrize(
    ("said", "parsed"),
    [
        ("codex-cli 0.171.0", (0, 171, 0)),
        ("2.1.332 (Claude Code)", (2, 1, 332)),
        ("codex-cli 0.172.0-alpha.3\n", (0, 172, 0)),
        ("no version here", None),
    ],
)
def test_parse_version(said: str, parsed: tuple[int, int, int] | None) -> None:
    assert parse_version(said) == parsed


def test_older_newer_and_equal_compare_numerically() -> None:
    codex = TESTED["codex"][1]
    assert versions.tested_version("openrouter") == codex  # openrouter runs the codex binary
    assert verdict("codex", "codex-cli 0.9.0").older  # 9 < 171, not "9" > "1"
    assert verdict("codex", "codex-cli 1.0.0").newer
    same = verdict("codex", f"codex-cli {codex}")
    assert (same.found, same.older, same.newer) == (codex, False, False)
    unknown = verdict("codex", "garbage")
    assert unknown.found is None and not unknown.older and not unknown.newer


def test_readme_lists_the_tested_versions() -> None:
    text = README.read_text()
    for package, version in TESTED.values():
        assert f"{package}@{version}" in text
