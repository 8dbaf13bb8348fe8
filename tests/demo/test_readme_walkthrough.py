"""The README's console walkthrough is what the demo prints: its typed lines piped into
the real `chatbot run`, the output compared line by line with the README's transcript
(commit ids, durations, the sign-in token and paths aside). When the wording changes on
purpose, the failure prints the new transcript to paste into the README."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.realservers.proc import free_port

ROOT = Path(__file__).resolve().parents[2]
START, END = "<!-- walkthrough -->", "<!-- /walkthrough -->"
TYPED = re.compile(r"^\[#\d+\] owner@localhost: (.*)$")
# What differs from run to run: the commit, how long a run took, where the log is, the
# sign-in link's token and port.
VARYING = (
    (re.compile(r"\b[0-9a-f]{7,40}\b"), "<commit>"),
    (re.compile(r"\bafter \d+s\b"), "after <t>"),
    (re.compile(r"log in \S+/var/console/bot\.log"), "log in var/console/bot.log"),
    (re.compile(r"http://127\.0\.0\.1:\d+/signin/[A-Za-z0-9_-]+"), "<sign-in link>"),
    (re.compile(r"index <commit>\.\.<commit>"), "index <ids>"),
)


def readme_transcript() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split(START, 1)[1].split(END, 1)[0]
    lines = [line[4:] if line.startswith("    ") else line for line in block.splitlines()]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    assert lines and lines[0].startswith("$ scripts/run"), "the block starts with the command"
    return lines[1:]


def normal(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        for pattern, shown in VARYING:
            line = pattern.sub(shown, line)
        out.append(line.rstrip())
    return out


def test_the_readme_walkthrough_is_what_the_demo_prints(tmp_path: Path) -> None:
    expected = readme_transcript()
    typed = [found.group(1) for line in expected if (found := TYPED.match(line))]
    assert len(typed) >= 3, expected
    env = {k: v for k, v in os.environ.items() if k not in ("CHATBOT_CONFIG", "PYTHONPATH")}
    env["INTENT_BOARD_DEMO_WEB"] = f"127.0.0.1:{free_port()}"
    done = subprocess.run(
        [sys.executable, "-m", "chatbot", "run"],
        input="".join(f"{line}\n" for line in typed),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = normal(done.stdout.splitlines())
    assert printed == normal(expected), "\n".join(
        ["the demo now prints (paste into the README's walkthrough):", *printed]
    )
