"""`chatbot check` asks each configured runtime's real CLI for its version."""

from __future__ import annotations

import subprocess
from pathlib import Path

from runners.runtimes import RUNTIMES
from tests.inprocess import chatbot
from tests.realcli.harness import write_secrets


def test_check_reports_each_real_cli_at_the_tested_version(cli_bins, tmp_path: Path) -> None:
    (tmp_path / "repo" / "docs" / "intent").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    write_secrets(tmp_path)
    # Every registered runtime, each with its program's key (a key file satisfies every
    # runtime's rule; none is used, check only asks for versions).
    sections = "".join(
        f'[runtimes.{name}]\nbinary = "{cli_bins[record.cli.command]}"\n'
        f'api_key_file = "secrets/{record.cli.command}-key"\nbase_url = "http://127.0.0.1:9"\n'
        for name, record in RUNTIMES.items()
    )
    config = tmp_path / "bot.toml"
    config.write_text(
        f"""
[bot]
owners = ["owner@example.org"]
repo = "repo"
{sections}
[lanes.light]
runtime = "codex"
model = "gpt-5.5"
iteration_limit = 10
"""
    )
    done = chatbot("check", "--config", str(config))
    assert done.returncode == 0, done.stdout + done.stderr
    for name, record in RUNTIMES.items():
        found = cli_bins[record.cli.command]
        line = f"runtime {name}: {found} found, version {record.cli.tested}, the tested version"
        assert line in done.stdout
