"""The runner library stands alone: no chat layer, nothing outside stdlib and pydantic."""

from __future__ import annotations

import subprocess
import sys


def test_runner_modules_import_without_the_chat_layer() -> None:
    code = (
        "import sys, runners.process, runners.runtimes, runners.workspace\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('chatbot', 'slixmpp', 'nio', 'aiosqlite'))\n"
        "print(','.join(bad))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
