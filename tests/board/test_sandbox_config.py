"""Which sandbox the configuration gives a run, and when the bot refuses to start
without one (issue 32)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.config import parse_config
from chatbot.pipeline import sandboxing
from runners.sandbox import NetworkAccess, find_tool
from runners.workspace import commit_all, create_worktree
from tests.board.test_config import MINIMAL

GEMINI = """
[runtimes.gemini]
binary = "gemini"
api_key_file = "gemini.key"
[lanes.g]
runtime = "gemini"
model = "gemini-2.5-pro"
iteration_limit = 10
"""


def config_of(tmp_path: Path, text: str, sandbox: str | None = None):
    (tmp_path / "gemini.key").write_text("a-gemini-key-long-enough\n")
    if sandbox is not None:
        text = text.replace("[bot]\n", f'[bot]\nsandbox = "{sandbox}"\n', 1)
    return parse_config(text, tmp_path / "bot.toml")


@pytest.fixture
def no_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandboxing, "_installed_tool", lambda: None)


@pytest.fixture
def a_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandboxing, "_installed_tool", lambda: "/usr/bin/bwrap")


def test_gemini_writing_without_a_sandbox_tool_is_refused_naming_the_fix(
    tmp_path: Path, no_tool: None
) -> None:
    problem = sandboxing.start_problem(config_of(tmp_path, MINIMAL + GEMINI))
    assert problem is not None
    assert "lane(s) g" in problem and "apt-get install bubblewrap" in problem
    assert 'sandbox = "off"' in problem
    # codex alone keeps its own sandbox: no refusal; `off` said on purpose: none either.
    assert sandboxing.start_problem(config_of(tmp_path, MINIMAL)) is None
    off = config_of(tmp_path, MINIMAL + GEMINI, "off")
    assert sandboxing.start_problem(off) is None
    lines, ok = sandboxing.check_lines(off)
    assert ok and any("lane g: gemini has no protection of its own either" in x for x in lines)
    lines, ok = sandboxing.check_lines(config_of(tmp_path, MINIMAL + GEMINI))
    assert not ok and any("NONE: a writing run of it is refused" in line for line in lines)
    # An open lane with no sandbox tool: said, with what that means.
    text = MINIMAL.replace("iteration_limit = 10", 'iteration_limit = 10\nnetwork = "open"')
    lines, ok = sandboxing.check_lines(config_of(tmp_path, text))
    assert ok and any("nothing else is held either" in line for line in lines)


def test_bwrap_demanded_but_missing_is_refused(tmp_path: Path, no_tool: None) -> None:
    problem = sandboxing.start_problem(config_of(tmp_path, MINIMAL, "bwrap"))
    assert problem is not None and "bubblewrap is not installed" in problem


def test_with_the_tool_nothing_is_refused_and_an_open_lane_is_said(
    tmp_path: Path, a_tool: None
) -> None:
    text = MINIMAL.replace("iteration_limit = 10", 'iteration_limit = 10\nnetwork = "open"')
    config = config_of(tmp_path, text + GEMINI)
    assert sandboxing.start_problem(config) is None
    lines, ok = sandboxing.check_lines(config)
    assert ok
    assert any('lane light: network = "open"' in line for line in lines)
    assert any("no base_url, so its runs keep the host's network" in line for line in lines)


def test_a_plan_hides_the_bots_own_things_and_shows_the_worktree(
    tmp_path: Path, a_tool: None
) -> None:
    config = config_of(tmp_path, MINIMAL + GEMINI)
    worktree = config.bot.workspaces / "card"
    worktree.mkdir(parents=True)
    home = config.bot.workspaces / ".agent-homes" / "gemini"
    plan = sandboxing.plan(
        config, runtime="gemini", cwd=worktree, writes=True, network="provider", home=home
    )
    assert plan is not None and plan.network is NetworkAccess.PROVIDER
    assert worktree.resolve() in plan.writable and home.resolve() in plan.writable
    hidden = set(plan.hidden)
    assert tmp_path.resolve() in hidden  # the configuration's folder
    assert (tmp_path / "gemini.key").resolve() in hidden
    assert config.bot.sqlite_file.resolve() in hidden
    assert config.bot.workspaces.resolve() in hidden
    reader = sandboxing.plan(
        config, runtime="gemini", cwd=worktree, writes=False, network="open", home=home
    )
    assert worktree.resolve() in reader.readable and worktree.resolve() not in reader.writable
    assert reader.network is NetworkAccess.OPEN


def test_chatbot_run_exits_2_when_a_lane_would_be_unconfined(tmp_path: Path) -> None:
    config = config_of(tmp_path, MINIMAL + GEMINI)
    (tmp_path / "bot.toml").write_text(MINIMAL + GEMINI)
    assert config is not None
    # A PATH without bwrap: only what the CLI itself needs.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("git", "sh"):
        found = subprocess.run(["sh", "-c", f"command -v {name}"], capture_output=True, text=True)
        (bin_dir / name).symlink_to(found.stdout.strip())
    env = {**os.environ, "PATH": str(bin_dir)}
    done = subprocess.run(
        [sys.executable, "-m", "chatbot", "run", "--config", str(tmp_path / "bot.toml")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "apt-get install bubblewrap" in done.stderr


def test_workspaces_under_tmp_are_named_for_codex(tmp_path: Path, a_tool: None) -> None:
    text = MINIMAL.replace('repo = "repo"', 'repo = "repo"\nworkspaces = "/tmp/board-workspaces"')
    lines, _ = sandboxing.check_lines(config_of(tmp_path, text))
    assert any("lie under /tmp" in line for line in lines), lines
    lines, _ = sandboxing.check_lines(config_of(tmp_path, MINIMAL))
    assert not any("lie under /tmp" in line for line in lines)


@pytest.mark.skipif(find_tool() is None, reason="bubblewrap (bwrap) is not installed")
async def test_repository_hooks_run_in_the_sandbox_only_when_asked(tmp_path: Path) -> None:
    # [repo] run_hooks: the hooks run, inside the agents' sandbox: the bot's secrets are
    # out of sight, and the repository's config and hooks cannot be rewritten.
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    secret = tmp_path / "gemini.key"
    seen = tmp_path / "hook-saw"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        "#!/bin/sh\n"
        f"cat {secret} > {seen}.secret 2>/dev/null\n"
        "echo '[core] hooksPath = /tmp' >> \"$(git rev-parse --git-common-dir)/config\" "
        "2>/dev/null\n"
        f"echo ran > hook-ran.txt\n"
    )
    hook.chmod(0o755)
    config_before = (repo / ".git" / "config").read_text()
    text = (
        MINIMAL.replace('repo = "repo"', 'repo = "repo"\n') + GEMINI + "[repo]\nrun_hooks = true\n"
    )
    config = config_of(tmp_path, text)
    tree = await create_worktree(repo, config.bot.workspaces, "card", "main")
    (tree.path / "work.txt").write_text("work\n")
    sandbox = sandboxing.for_hooks(config, tree.path, tree.admin)
    assert sandbox is not None
    await commit_all(tree, "Work", author=("t", "t@t"), run_hooks=True, hooks_sandbox=sandbox)
    assert (tree.path / "hook-ran.txt").read_text() == "ran\n"  # it ran, in the worktree
    assert (
        not Path(f"{seen}.secret").exists()
        or "a-gemini-key" not in Path(f"{seen}.secret").read_text()
    )
    assert (repo / ".git" / "config").read_text() == config_before
    # Without run_hooks the same hook does not run at all.
    (tree.path / "hook-ran.txt").unlink()
    (tree.path / "more.txt").write_text("more\n")
    await commit_all(tree, "More", author=("t", "t@t"))
    assert not (tree.path / "hook-ran.txt").exists()
