"""The first run's tools load the MCP SDK and freeze the heap, once per process.

Without the freeze, the full collections that follow the SDK's import stall the loop
for 50-65 ms in the middle of a dispatch (bench/dispatch.py). Checked in a fresh
interpreter: the test process has long loaded the SDK and may have frozen already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.sqlite_only  # no store: the engine does not matter

PROBE = """
import gc, json, sys
from chatbot.pipeline.run_tools import load_session
before = (gc.get_freeze_count(), "mcp" in sys.modules)
load_session()
first = gc.get_freeze_count()
kept = [[n] for n in range(5000)]  # allocated after the first load: not to be pinned
load_session()
print(json.dumps({"before": before, "first": first, "again": gc.get_freeze_count()}))
"""


def test_the_first_load_of_the_tools_sdk_freezes_the_heap_and_a_second_does_not() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    # Nothing was frozen, and the SDK not loaded, before the first run's tools.
    assert found["before"] == [0, False]
    # The start-up heap and the SDK's objects: some 100,000 (at least 50,000).
    assert found["first"] > 50_000, found
    # The second load pins nothing more: what came since stays collectable.
    assert found["again"] == found["first"], found
