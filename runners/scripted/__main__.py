"""`python -m runners.scripted codex|claude ARGS...`: run one scripted CLI."""

import sys

from runners.scripted.stand_ins import STAND_INS

if __name__ == "__main__":
    name = sys.argv.pop(1) if len(sys.argv) > 1 else ""
    if name not in STAND_INS:
        sys.exit(f"usage: python -m runners.scripted {'|'.join(STAND_INS)} ARGS...")
    STAND_INS[name]()
