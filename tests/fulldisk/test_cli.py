"""`chatbot` as an operator runs it, with the database's disk full: `check` says so
and fails, and a start exits 1 with one line naming the cause, not a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.board.test_cli import CONFIG, FAKE_CODEX, chatbot
from tests.fulldisk.disk import SmallDisk, small_disk


@pytest.fixture
def full(tmp_path: Path):
    """A configured bot whose database exists on a disk that is now full."""
    with small_disk(tmp_path) as disk:
        intents = tmp_path / "repo" / "docs" / "intent"
        intents.mkdir(parents=True)
        (intents / "alpha.md").write_text("# Alpha\n")
        subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
        text = CONFIG.format(fake_codex=FAKE_CODEX).replace(
            'database = "var/board.sqlite3"', f'database = "{disk.path}/board.sqlite3"'
        )
        config = tmp_path / "bot.toml"
        config.write_text(text)
        made = chatbot("cards", "--config", str(config))
        assert made.returncode == 0, made.stderr
        disk.fill()
        yield config, disk
        disk.free()


def test_check_says_the_database_takes_no_writes(full: tuple[Path, SmallDisk]) -> None:
    config, disk = full
    result = chatbot("check", "--config", str(config), "--no-connect")
    assert result.returncode == 1, result.stdout + result.stderr
    [line] = [x for x in result.stdout.splitlines() if "NOT writable" in x]
    assert "full" in line and "free space" in line
    disk.free()
    result = chatbot("check", "--config", str(config), "--no-connect")
    assert "database: writable" in result.stdout, result.stdout + result.stderr


def test_a_start_on_a_full_disk_exits_1_with_one_line(full: tuple[Path, SmallDisk]) -> None:
    config, _ = full
    result = chatbot("run", "--config", str(config))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    errors = [x for x in result.stderr.splitlines() if x.startswith("chatbot:")]
    assert len(errors) == 1, result.stderr
    assert "full" in errors[0] and "board.sqlite3" in errors[0]
