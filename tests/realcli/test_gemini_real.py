"""What the gemini runtime does for Gemini CLI 0.61.0 beyond what every CLI is tested for
(tests/realcli/test_*_real.py run every role through it): each protection of its
invocation shown on the real CLI, and failing when that protection is taken away."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatbot.domain.roles import BY_NAME
from runners.process import ProcessLimits
from runners.runtimes import Mode, gemini, run_model
from runners.workspace import agent_home
from tests.pipeline.harness import git, make_repo
from tests.realcli.harness import child_env, run_request
from tests.realcli.providers import Say, ScriptedModel, Shell

LIMITS = ProcessLimits(timeout=90, idle_timeout=90, kill_grace=1.0)
GREET = "def greet():\n    return 'hi'\n"


@pytest.fixture
def model(models: dict[str, ScriptedModel]) -> ScriptedModel:
    return models["gemini"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose HEAD adds greet.py: a commit with a patch to read."""
    repo = make_repo(tmp_path, {})
    (repo / "greet.py").write_text(GREET)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Add greet()")
    return repo


async def results(model, cli_bins, tmp_path: Path, cwd: Path, commands, **fields) -> list[str]:
    """Run `commands` as one model turn each, then answer; what each command returned."""
    model.script(*(Shell(command) for command in commands), Say("done"))
    request = run_request("gemini", cli_bins, model, tmp_path, cwd, "Look.", **fields)
    result = await run_model("gemini", request, limits=LIMITS, base_env=child_env(tmp_path / "h"))
    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    return model.seen[-1].tool_results[-len(commands) :]


REVIEW = BY_NAME["reviewer"].grants


async def test_its_deny_rules_keep_a_granted_git_from_writing(
    model, cli_bins, repo: Path, tmp_path: Path, monkeypatch
) -> None:
    leak = tmp_path / "leak.txt"
    writes = [f"git diff --no-ext-diff --output={leak} HEAD~1 HEAD"]
    rules = gemini.RUNTIME.tool_rules(REVIEW)
    (said,) = await results(model, cli_bins, tmp_path, repo, writes, allowed_tools=rules)
    assert "denied by policy" in said and not leak.exists()
    # The same grants without the deny rules: `--output` makes the granted diff write.
    first = gemini.POLICY.index("[[rule]]")
    allow_only = gemini.POLICY[: gemini.POLICY.index("[[rule]]", first + 1)]
    monkeypatch.setattr(gemini, "POLICY", allow_only)
    await results(model, cli_bins, tmp_path, repo, writes, allowed_tools=rules)
    assert "+def greet" in leak.read_text()


async def test_a_granted_prefix_admits_no_chain_substitution_pipe_or_program(
    model, cli_bins, repo: Path, tmp_path: Path
) -> None:
    commands = [
        "git show HEAD && touch chained.txt",
        "git show HEAD; touch separated.txt",
        "git show $(touch substituted.txt)",
        "git show HEAD | tee piped.txt",
        "git grep -Otouch greet HEAD",
        "git grep --open-files-in-pager=touch greet HEAD",
        "git showx HEAD",
        "git -c core.pager=touch show HEAD",
    ]
    rules = gemini.RUNTIME.tool_rules(REVIEW)
    refused = await results(model, cli_bins, tmp_path, repo, commands, allowed_tools=rules)
    for command, text in zip(commands, refused, strict=True):
        assert "denied by policy" in text or "requires user confirmation" in text, (command, text)
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / "greet").exists() and not list(repo.glob("*.txt"))


async def test_neither_the_users_nor_the_repositorys_settings_apply(
    model, cli_bins, repo: Path, tmp_path: Path
) -> None:
    # Either would take read_file away and run a hook at the session's start.
    hooked = tmp_path / "hooked"
    for where in (tmp_path / "h" / ".gemini", repo / ".gemini"):
        hook = {"name": "h", "type": "command", "command": f"touch {hooked}-{where.parent.name}"}
        settings = {
            "tools": {"exclude": ["read_file"]},
            "hooks": {"SessionStart": [{"hooks": [hook]}]},
        }
        where.mkdir(parents=True)
        (where / "settings.json").write_text(json.dumps(settings))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a repository that configures Gemini CLI")
    model.script(Say("ok"))
    request = run_request("gemini", cli_bins, model, tmp_path, repo, "Hi.")
    result = await run_model("gemini", request, limits=LIMITS, base_env=child_env(tmp_path / "h"))
    assert result.ok, result.failure
    assert not list(tmp_path.glob("hooked*"))
    assert "read_file" in model.seen[0].tools


async def test_the_key_never_reaches_a_command_the_agent_runs(
    model, cli_bins, repo: Path, tmp_path: Path
) -> None:
    (shown,) = await results(model, cli_bins, tmp_path, repo, ["env"], mode=Mode.WORKSPACE_WRITE)
    assert "GOOGLE_GEMINI_BASE_URL" in shown and model.key not in shown


async def test_its_shell_needs_no_ext_diff_for_a_patch(
    model, cli_bins, repo: Path, tmp_path: Path
) -> None:
    """Gemini CLI 0.61.0 empties git's diff.external for the commands it runs; git 2.39
    then tries to run "" for a patch. Shown so that a CLI or git that fixes it is noticed
    (then the README's note and the reviewer test's --no-ext-diff can go)."""
    commands = ["git diff HEAD~1 HEAD", "git diff --no-ext-diff HEAD~1 HEAD", "git show HEAD"]
    plain, own, show = await results(
        model, cli_bins, tmp_path, repo, commands, mode=Mode.WORKSPACE_WRITE
    )
    assert "external diff died" in plain
    assert "+def greet():" in own and "+def greet():" in show


async def test_it_deletes_no_kept_session_at_its_start(
    model, cli_bins, repo: Path, tmp_path: Path
) -> None:
    """Gemini CLI prunes its chat files at every start, unawaited, beside the run, and
    deletes any it cannot read at that moment: once under load, the one a resumed
    builder was writing (tests/realcli/test_roles_real.py lost its session). Its settings
    turn the pruning off; an unreadable chat file, which it would delete, stays."""
    model.script(Say("ok"))
    request = run_request("gemini", cli_bins, model, tmp_path, repo, "Hi.")
    result = await run_model("gemini", request, limits=LIMITS, base_env=child_env(tmp_path / "h"))
    assert result.ok, result.failure
    (chats,) = agent_home(tmp_path / "workspaces", "gemini").glob(".gemini/tmp/*/chats")
    kept = sorted(chats.glob("session-*.jsonl"))
    assert kept, "the first run kept no chat file"
    planted = chats / "session-2026-12-01T00-00-unread00.jsonl"
    planted.write_text("{not json\n")
    model.script(Say("ok"))
    request = run_request("gemini", cli_bins, model, tmp_path, repo, "Hi again.")
    result = await run_model("gemini", request, limits=LIMITS, base_env=child_env(tmp_path / "h"))
    assert result.ok, result.failure
    assert planted.exists() and all(chat.exists() for chat in kept)
