"""`python -m runners.scripted codex|claude ARGS...`: run one scripted CLI."""

import sys

from runners.scripted import claude, codex

if __name__ == "__main__":
    name = sys.argv.pop(1) if len(sys.argv) > 1 else ""
    if name not in ("codex", "claude"):
        sys.exit("usage: python -m runners.scripted codex|claude ARGS...")
    (codex if name == "codex" else claude).main()
