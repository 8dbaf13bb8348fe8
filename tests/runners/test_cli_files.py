"""The files a CLI reads at start (`Invocation.files`: its settings, a policy), written by
run_model before the CLI runs: in place once, left alone while their text holds, replaced
whole when it changes, in folders only the bot's user reads; a place that cannot take
them is one clear error naming the file. The home they live in is this host's own."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from runners.runtimes import InvalidRequest, RunnerError, RunRequest, get_runtime
from runners.runtimes.run import write_files
from runners.workspace import agent_home


def test_files_are_written_with_their_folders_readable_by_the_bot_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = home / ".cli" / "settings.json"
    policy = home / "policies" / "review.toml"
    write_files({settings: '{"a": 1}\n', policy: "[[rule]]\n"})
    assert settings.read_text() == '{"a": 1}\n' and policy.read_text() == "[[rule]]\n"
    for folder in (home, settings.parent, policy.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def test_a_file_holding_its_text_is_left_and_a_changed_one_replaced_whole(tmp_path: Path) -> None:
    settings = tmp_path / "home" / "settings.json"
    write_files({settings: "one\n"})
    first = settings.stat()
    write_files({settings: "one\n"})
    assert (settings.stat().st_ino, settings.stat().st_mtime_ns) == (
        first.st_ino,
        first.st_mtime_ns,
    )
    # A new text arrives by rename: a run starting meanwhile reads the old file or the new.
    write_files({settings: "two\n"})
    assert settings.read_text() == "two\n" and settings.stat().st_ino != first.st_ino
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]
    # Damaged (not UTF-8) is not its text either.
    settings.write_bytes(b"\xff\xfe")
    write_files({settings: "two\n"})
    assert settings.read_text() == "two\n"


def test_a_place_that_cannot_take_a_file_is_one_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "home"
    blocker.write_text("a file where the home folder should be\n")
    settings = blocker / ".cli" / "settings.json"
    with pytest.raises(RunnerError, match=f"cannot write {settings} for the agent CLI: "):
        write_files({settings: "{}\n"})


def test_the_agent_home_is_beside_the_worktrees_and_never_a_cards(tmp_path: Path) -> None:
    home = agent_home(tmp_path / "workspaces", "codex")
    assert home == tmp_path / "workspaces" / ".agent-homes" / "codex"
    # A card's worktree is <workspaces>/<slug>; a slug never starts with a dot.
    assert home.parent.name.startswith(".")


def test_a_home_must_be_an_absolute_path(tmp_path: Path) -> None:
    codex = get_runtime("codex")
    codex.build_argv(RunRequest("codex", tmp_path, "hi", home=tmp_path / "home"))
    with pytest.raises(InvalidRequest, match="must be absolute paths"):
        codex.build_argv(RunRequest("codex", tmp_path, "hi", home=Path("var/home")))
