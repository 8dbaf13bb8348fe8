"""The agent CLI versions this project is tested against, and reading a CLI's `--version`.

`TESTED` is the one place the versions are pinned: `scripts/test` installs exactly
these from the npm registry, the README lists them, and `chatbot check` compares
each configured binary against them. Stdlib only, so the stand-in CLIs in
runners/scripted can report the same versions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# runtime name -> (npm package, version). openrouter runs the codex binary.
TESTED: dict[str, tuple[str, str]] = {
    "codex": ("@openai/codex", "0.171.0"),
    "claude": ("@anthropic-ai/claude-code", "2.1.332"),
}
BINARY_OF_RUNTIME = {"codex": "codex", "claude": "claude", "openrouter": "codex"}

_VERSION_RE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def tested_version(runtime: str) -> str | None:
    """The pinned version of the CLI a runtime runs (openrouter -> codex)."""
    pinned = TESTED.get(BINARY_OF_RUNTIME.get(runtime, runtime))
    return pinned[1] if pinned else None


def parse_version(text: str) -> tuple[int, int, int] | None:
    """The first x.y.z in a `--version` line: `codex-cli 0.171.0`, `2.1.332 (Claude Code)`."""
    match = _VERSION_RE.search(text)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


@dataclass(frozen=True, slots=True)
class VersionVerdict:
    """How a found version compares with the tested one."""

    found: str | None
    tested: str | None

    @property
    def older(self) -> bool:
        found, tested = parse_version(self.found or ""), parse_version(self.tested or "")
        return found is not None and tested is not None and found < tested

    @property
    def newer(self) -> bool:
        found, tested = parse_version(self.found or ""), parse_version(self.tested or "")
        return found is not None and tested is not None and found > tested


def verdict(runtime: str, version_output: str) -> VersionVerdict:
    parsed = parse_version(version_output)
    found = ".".join(map(str, parsed)) if parsed else None
    return VersionVerdict(found=found, tested=tested_version(runtime))
