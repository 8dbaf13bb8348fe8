"""The console demo loads no chat network's library: neither slixmpp nor nio.

Checked in a fresh interpreter, as a user starts it: `chatbot run` with no
configuration and `/status` piped in, then what `sys.modules` holds at its end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NETWORK_LIBRARIES = ("slixmpp", "nio", "vodozemac")

# Runs `chatbot` as its entry point does, then writes what was imported to argv[1].
SESSION = """
import json, sys
from chatbot.app.cli import main
code = main(sys.argv[2:])
roots = sorted({name.split(".")[0] for name in sys.modules})
with open(sys.argv[1], "w") as out:
    json.dump({"exit": code, "roots": roots}, out)
"""


def run_session(tmp_path: Path, typed: str, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    result_file = tmp_path / "modules.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("CHATBOT_CONFIG", None)
    done = subprocess.run(
        [sys.executable, "-c", SESSION, str(result_file), *args],
        input=typed,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert result_file.exists(), done.stderr
    return done, json.loads(result_file.read_text())


def test_the_console_demo_imports_neither_slixmpp_nor_nio(tmp_path: Path) -> None:
    done, found = run_session(tmp_path, "/status\n", "run")
    assert found["exit"] == 0, done.stderr
    # The session really ran: the board answered the piped command.
    assert "planned: 4" in done.stdout, done.stdout
    assert "chatbot" in found["roots"]
    assert [lib for lib in NETWORK_LIBRARIES if lib in found["roots"]] == []
