"""The example configuration of every earlier commit that changed it, as the project
shipped it: a config an earlier release accepted must still start the bot.

They are kept in `data/example_configs.jsonl.gz` (one JSON object a line: commit,
date, text), so the test needs no git history (a shallow clone has none); where the
history is there, its versions are read too. Refresh after a release that changed the
example: `python -m tests.board.earlier_configs`.
"""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KEPT = Path(__file__).with_name("data") / "example_configs.jsonl.gz"
# Where the example lived: the packaged file, and before it the config folder.
PATHS = ("chatbot/app/example.toml", "config/example.toml")


def kept() -> dict[str, dict[str, str]]:
    with gzip.open(KEPT, "rt", encoding="utf-8") as lines:
        return {entry["commit"]: entry for entry in map(json.loads, lines)}


def from_history() -> dict[str, dict[str, str]]:
    """Each commit that changed the example, oldest first; {} without git history."""
    log = _git("log", "--reverse", "--format=%H %cs", "--", *PATHS)
    found = {}
    for line in (log or "").splitlines():
        commit, date = line.split()
        for path in PATHS:
            text = _git("show", f"{commit}:{path}")
            # The config folder's file became a symbolic link (its target is the text).
            if text and "\n" in text.strip():
                found[commit] = {"commit": commit, "date": date, "text": text}
                break
    return found


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def refresh() -> int:
    entries = {**kept(), **from_history()} if KEPT.exists() else from_history()
    ordered = sorted(entries.values(), key=lambda e: (e["date"], e["commit"]))
    with gzip.open(KEPT, "wt", encoding="utf-8") as out:
        for entry in ordered:
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")
    return len(ordered)


if __name__ == "__main__":
    print(f"{refresh()} example configurations kept in {KEPT}")
