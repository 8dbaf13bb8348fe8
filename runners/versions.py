"""The agent CLI versions this project is tested against, and reading a CLI's `--version`.

The pins themselves live on each runtime's record (`Runtime.cli`, in its module
under runners/runtimes/); `TESTED` is the view of them by program: `scripts/test`
installs exactly these from the npm registry, the README lists them, and `chatbot
check` compares each configured binary against them. Stdlib only, so the stand-in
CLIs in runners/scripted can report the same versions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from runners.runtimes.registry import RUNTIMES, clis

# CLI program -> (npm package, version). openrouter runs the codex program.
TESTED: dict[str, tuple[str, str]] = {cli.command: (cli.package, cli.tested) for cli in clis()}

_VERSION_RE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def tested_version(runtime: str) -> str | None:
    """The pinned version of the CLI a runtime runs (openrouter -> codex's)."""
    record = RUNTIMES.get(runtime)
    return record.cli.tested if record is not None else None


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
