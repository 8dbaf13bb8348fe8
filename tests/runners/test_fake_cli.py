"""The fake CLIs hold our argv to the real CLIs' rules, so passing tests mean something."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from runners.runtimes import Mode, RunRequest, build_invocation
from runners.versions import TESTED
from tests.runners.conftest import FAKE_CLAUDE, FAKE_CODEX, FakeCli


def call(argv: list[str], fake: FakeCli, stdin: str = "prompt") -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, input=stdin, env=fake.env, capture_output=True, text=True, timeout=30
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([FAKE_CODEX, "--bogus", "exec", "-"], "unexpected argument '--bogus'"),
        ([FAKE_CODEX, "--sandbox", "read_only", "exec", "-"], "invalid value 'read_only'"),
        ([FAKE_CODEX, "-c", "no-equals-sign", "exec", "-"], "invalid value 'no-equals-sign'"),
        ([FAKE_CODEX, "exec", "--json", "--max-turns", "3", "-"], "unexpected argument"),
        ([FAKE_CODEX, "exec", "--json", "--color"], "a value is required"),
        ([FAKE_CODEX, "exec", "--json", "-", "extra"], "unexpected argument 'extra'"),
        ([FAKE_CODEX, "review"], "unrecognized subcommand"),
        ([FAKE_CLAUDE, "-p", "--bogus"], "unknown option '--bogus'"),
        ([FAKE_CLAUDE, "-p", "--max-turns", "many"], "'--max-turns <turns>' argument 'many'"),
        ([FAKE_CLAUDE, "-p", "--permission-mode", "yolo"], "argument 'yolo' is invalid"),
        ([FAKE_CLAUDE, "-p", "--output-format"], "argument missing"),
        ([FAKE_CLAUDE, "--output-format", "json"], "only implements -p"),
    ],
)
def test_malformed_command_lines_are_refused_with_a_usage_error(
    fake_cli: FakeCli, argv: list[str], message: str
) -> None:
    fake_cli.write({"answer": "never", "repeat": True})
    done = call(argv, fake_cli)
    # As the real ones: codex (clap) exits 2, claude (commander) 1.
    assert done.returncode == (2 if argv[0] == FAKE_CODEX else 1)
    assert message in done.stderr
    assert done.stdout == ""
    assert fake_cli.calls()[0]["usage_error"]


@pytest.mark.parametrize("runtime", ["codex", "claude"])
@pytest.mark.parametrize("mode", list(Mode))
def test_every_command_line_we_build_is_accepted(
    fake_cli: FakeCli, tmp_path: Path, runtime: str, mode: Mode
) -> None:
    fake_cli.write({"answer": "accepted", "repeat": True})
    request = RunRequest(
        binary=FAKE_CODEX if runtime == "codex" else FAKE_CLAUDE,
        cwd=tmp_path,
        prompt="p",
        mode=mode,
        model="some-model",
        reasoning_effort="high",
        max_turns=8,
        allowed_tools=("Bash(git *)",),
    )
    done = call(list(build_invocation(runtime, request).argv), fake_cli, stdin="p")
    assert done.returncode == 0, done.stderr
    assert "accepted" in done.stdout


def test_codex_refuses_a_folder_outside_git_without_the_skip_flag(
    fake_cli: FakeCli, tmp_path: Path
) -> None:
    fake_cli.write({"answer": "accepted", "repeat": True})
    argv = [FAKE_CODEX, "-C", str(tmp_path), "exec", "--json", "-"]
    done = call(argv, fake_cli)
    assert done.returncode == 1
    assert "Not inside a trusted directory" in done.stderr
    done = call([*argv[:-1], "--skip-git-repo-check", "-"], fake_cli)
    assert done.returncode == 0 and "accepted" in done.stdout


def test_an_empty_git_folder_above_is_no_repository_as_for_git(
    fake_cli: FakeCli, tmp_path: Path
) -> None:
    # What codex's sandbox leaves in /tmp when a command it runs is killed.
    fake_cli.write({"answer": "accepted", "repeat": True})
    (tmp_path / ".git").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    done = call([FAKE_CODEX, "-C", str(work), "exec", "--json", "-"], fake_cli)
    assert done.returncode == 1 and "Not inside a trusted directory" in done.stderr
    assert subprocess.run(["git", "-C", str(work), "rev-parse"], capture_output=True).returncode


def test_codex_custom_provider_needs_a_name_and_its_key_variable(
    fake_cli: FakeCli, tmp_path: Path
) -> None:
    fake_cli.write({"answer": "accepted", "repeat": True})
    provider = ["-c", 'model_provider="gw"', "-c", 'model_providers.gw.base_url="http://x/v1"']
    exec_ = ["-C", str(tmp_path), "exec", "--skip-git-repo-check", "--json", "-"]
    done = call([FAKE_CODEX, *provider, *exec_], fake_cli)
    assert done.returncode == 1 and "provider name must not be empty" in done.stderr
    provider += ["-c", 'model_providers.gw.name="Gw"', "-c", 'model_providers.gw.env_key="GW_KEY"']
    done = call([FAKE_CODEX, *provider, *exec_], fake_cli)
    # Like the real one: the missing key fails the turn, as JSON events on stdout.
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1
    assert events[-1] == {
        "type": "turn.failed",
        "error": {"message": "Missing environment variable: `GW_KEY`."},
    }
    fake_cli.env["GW_KEY"] = "k"
    assert call([FAKE_CODEX, *provider, *exec_], fake_cli).returncode == 0


@pytest.mark.parametrize(("fake", "said"), [(FAKE_CODEX, "codex-cli "), (FAKE_CLAUDE, "")])
def test_version_is_the_tested_version(fake_cli: FakeCli, fake: str, said: str) -> None:
    cli = "codex" if fake == FAKE_CODEX else "claude"
    done = call([fake, "--version"], fake_cli)
    assert done.returncode == 0
    assert done.stdout.startswith(said + TESTED[cli][1])


def test_scenario_as_a_directory_one_file_per_call(fake_cli: FakeCli, tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    calls.mkdir()
    (calls / "01-operator.json").write_text(json.dumps({"answer": "first"}))
    (calls / "02-builder.json").write_text(json.dumps({"answer": "second"}))
    fake_cli.env["FAKE_CLI_SCENARIO"] = str(calls)
    argv = [FAKE_CLAUDE, "-p", "--output-format", "json"]
    answers = [json.loads(call(argv, fake_cli).stdout)["result"] for _ in range(2)]
    assert answers == ["first", "second"]
    assert call(argv, fake_cli).returncode == 3  # nothing left
