"""`chatbot check` asks each configured runtime's real CLI for its version."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from runners.versions import TESTED
from tests.realcli.harness import write_secrets


def test_check_reports_each_real_cli_at_the_tested_version(cli_bins, tmp_path: Path) -> None:
    (tmp_path / "repo" / "docs" / "intent").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    write_secrets(tmp_path)
    config = tmp_path / "bot.toml"
    config.write_text(
        f"""
[bot]
owners = ["owner@example.org"]
repo = "repo"
[runtimes.codex]
binary = "{cli_bins["codex"]}"
[runtimes.claude]
binary = "{cli_bins["claude"]}"
[runtimes.openrouter]
binary = "{cli_bins["codex"]}"
api_key_file = "secrets/codex-key"
[lanes.light]
runtime = "codex"
model = "gpt-5.5"
iteration_limit = 10
"""
    )
    done = subprocess.run(
        [sys.executable, "-m", "chatbot", "check", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for runtime, binary in (("codex", "codex"), ("claude", "claude"), ("openrouter", "codex")):
        version = TESTED[binary][1]
        line = f"runtime {runtime}: {cli_bins[binary]} found, version {version}, the tested version"
        assert line in done.stdout
