"""Probe of the real Gemini CLI (issue 24) against the scripted Gemini API on 127.0.0.1:
what a runtime module will build on, measured rather than read from its docs. It may
go once the gemini runtime and its tests exist; the facts are in the note on Gemini
CLI (see the issue).

Every run is headless, prompt on stdin, `-o stream-json`, `--skip-trust` and a
Gemini home of its own (`GEMINI_CLI_HOME`) whose settings.json selects API-key auth
(without it 0.61.0 takes `GOOGLE_GEMINI_BASE_URL` for the unsupported "gateway"
auth and exits 41), turns usage statistics off (its only outside call) and bounds
turns by an environment variable. A writing role runs with `--approval-mode yolo`;
a read-only role in the default mode, where the CLI itself denies every writing tool
in a headless run; the reviewer's git reads are allowed by a policy file.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from runners.process import Outcome, ProcessLimits, ProcessResult, default_base_env, run_process
from tests.pipeline.harness import git, make_repo
from tests.pipeline.support import tree_snapshot
from tests.realcli import install
from tests.realcli.gemini_api import GeminiModel
from tests.realcli.providers import Hang, Say, Shell, WriteFile

PACKAGE, VERSION = "@google/gemini-cli", "0.61.0"
KEY = "gemini-loopback-key-3d2b"
MODEL = "gemini-2.5-flash"
LIMITS = ProcessLimits(timeout=90, idle_timeout=90, kill_grace=1.0)
YOLO = ("--approval-mode", "yolo")
GREET = "def greet():\n    return 'hi'\n"

SETTINGS = {
    "security": {
        "auth": {"selectedType": "gemini-api-key"},
        # Shell commands otherwise see GEMINI_API_KEY (measured with `env`).
        "environmentVariableRedaction": {"enabled": True},
    },
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    # Settings strings expand ${VAR:-default}; the CLI compares the string as a number.
    "model": {"maxSessionTurns": "${GEMINI_MAX_TURNS:--1}"},
}

# The reviewer's git reads. In a headless run the CLI's own rules deny the shell;
# these allow exactly these commands (word-bounded prefixes; a chain, a substitution
# or a redirection is refused) and deny the options that make git write or run.
REVIEW_POLICY = r"""
[[rule]]
toolName = "run_shell_command"
commandPrefix = ["git show", "git diff", "git log", "git grep"]
decision = "allow"
priority = 100

[[rule]]
toolName = "run_shell_command"
commandRegex = ".*--output"
decision = "deny"
priority = 200
denyMessage = "git may not write a file in a review."

[[rule]]
toolName = "run_shell_command"
commandRegex = 'git grep.*\s(-[A-Za-z]*O|--o)'
decision = "deny"
priority = 200
denyMessage = "git grep may not start a program in a review."
"""


@pytest.fixture(scope="session")
def gemini_bin(request) -> Path:
    """The pinned CLI where scripts/test puts it once it is pinned, or a copy of its own."""
    given = os.environ.get("GEMINI_PROBE_BIN")
    if given:
        return Path(given)
    pinned = install.binary("gemini")
    if install.installed_version(PACKAGE) == VERSION and os.access(pinned, os.X_OK):
        return pinned
    folder = request.config.cache.mkdir(f"gemini-cli-{VERSION}")
    found = install.binary("gemini", folder)
    if install.installed_version(PACKAGE, folder) != VERSION or not os.access(found, os.X_OK):
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is missing; scripts/test installs Node.js and npm")
        quiet = ["--no-audit", "--no-fund", "--loglevel=error"]
        argv = [npm, "install", "--prefix", str(folder), *quiet, f"{PACKAGE}@{VERSION}"]
        subprocess.run(argv, check=True)
    return found


@pytest.fixture
async def probe(gemini_bin, tmp_path):
    """Runs of the real CLI against a fresh scripted Gemini API, in one Gemini home."""
    model = GeminiModel(key=KEY)
    await model.start()
    yield Probe(gemini_bin, model, tmp_path)
    await model.stop()
    assert not model.problems, model.problems


@dataclass
class Probe:
    binary: Path
    model: GeminiModel
    root: Path

    @property
    def home(self) -> Path:
        return self.root / "gemini-home"

    def settings(self, **sections: dict[str, Any]) -> None:
        """Write the Gemini home's settings.json: SETTINGS with `sections` merged in."""
        (self.home / ".gemini").mkdir(parents=True, exist_ok=True)
        merged = {
            key: {**SETTINGS.get(key, {}), **sections.get(key, {})}
            for key in SETTINGS.keys() | sections.keys()
        }
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(merged))

    async def __call__(
        self,
        cwd: Path,
        prompt: str,
        *options: str,
        env: dict[str, str] | None = None,
        limits: ProcessLimits = LIMITS,
        model_name: str | None = MODEL,
    ) -> tuple[ProcessResult, list[dict[str, Any]]]:
        """One headless run; its result and its stream-json events."""
        if not (self.home / ".gemini" / "settings.json").exists():
            self.settings()
        base = default_base_env()
        base["HOME"] = str(self.root / "home")
        (self.root / "home").mkdir(exist_ok=True)
        argv = [str(self.binary), "-o", "stream-json", "--skip-trust", *options]
        argv += ["-m", model_name] if model_name else []
        extra = {
            "GEMINI_CLI_HOME": str(self.home),
            "GOOGLE_GEMINI_BASE_URL": self.model.base_url,
            "GEMINI_API_KEY": KEY,
            # One process instead of a launcher that ignores SIGTERM and a child: 0.5 s less.
            "GEMINI_CLI_NO_RELAUNCH": "true",
            **(env or {}),
        }
        result = await run_process(
            argv, cwd=cwd, stdin=prompt, base_env=base, extra_env=extra, limits=limits
        )
        lines = result.stdout.splitlines()
        return result, [json.loads(line) for line in lines if line.startswith("{")]


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in events if event["type"] == kind]


def outputs(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(status, output) of every tool result, in order."""
    return [
        (event["status"], event.get("output") or "") for event in of_type(events, "tool_result")
    ]


async def test_a_plain_answer_with_usage_and_session(probe, tmp_path) -> None:
    repo = make_repo(tmp_path, {})
    probe.model.script(Say("Hello from the loopback model."))
    result, events = await probe(repo, "Say hello.")

    assert result.ok, result.stderr_tail
    init, user, answer, final = events
    assert init["type"] == "init" and init["model"] == MODEL and init["session_id"]
    assert user == {**user, "role": "user", "content": "Say hello."}
    assert answer == {**answer, "role": "assistant", "content": "Hello from the loopback model."}
    # Usage of this invocation; no cost, no turn count.
    assert final["status"] == "success"
    stats = final["stats"]
    assert (stats["input_tokens"], stats["cached"], stats["output_tokens"]) == (100, 20, 10)
    assert list(stats["models"]) == [MODEL] and "cost" not in json.dumps(final)
    seen = probe.model.seen[0]
    assert (seen.model, seen.prompt, seen.cwd) == (MODEL, "Say hello.", str(repo))
    # A headless default-mode run is offered no tool that writes or runs a command.
    assert {"read_file", "grep_search", "glob"} <= seen.tools
    assert not seen.tools & {"write_file", "replace", "run_shell_command", "web_fetch"}


async def test_a_writing_role_runs_commands_and_writes_in_its_worktree(probe, tmp_path) -> None:
    repo = make_repo(tmp_path, {})
    worktree = tmp_path / "workspaces" / "greeting"
    git(repo, "worktree", "add", "-q", "-b", "card/greeting", str(worktree))
    probe.model.script(
        Shell("mkdir -p pkg && echo made > pkg/by-shell.txt && ls pkg"),
        WriteFile("greet.py", GREET),
        Say("Built it."),
    )
    result, events = await probe(worktree, "Build it.", *YOLO)

    assert result.ok, result.stderr_tail
    assert outputs(events) == [("success", "by-shell.txt"), ("success", "")]
    assert (worktree / "pkg" / "by-shell.txt").read_text() == "made\n"
    assert (worktree / "greet.py").read_text() == GREET and not (repo / "greet.py").exists()
    uses = of_type(events, "tool_use")
    assert [use["tool_name"] for use in uses] == ["run_shell_command", "write_file"]
    assert uses[1]["parameters"]["file_path"] == str(worktree / "greet.py")
    assert of_type(events, "result")[0]["stats"]["tool_calls"] == 2
    # The shell saw no key: settings redact it.
    probe.model.script(Shell("env"), Say("ok"))
    _, events = await probe(worktree, "Env.", *YOLO)
    shown = outputs(events)[0][1]
    assert "GOOGLE_GEMINI_BASE_URL" in shown and KEY not in shown


async def test_a_read_only_role_cannot_write(probe, tmp_path) -> None:
    repo = make_repo(tmp_path, {})
    before = tree_snapshot(repo)
    probe.model.script(
        WriteFile("greet.py", GREET),
        Shell("touch made.txt && echo changed >> README.md"),
        Say("Looked only."),
    )
    result, events = await probe(repo, "Inspect.")

    assert result.ok, result.stderr_tail
    assert tree_snapshot(repo) == before and git(repo, "status", "--porcelain") == ""
    (write_status, write_text), (shell_status, shell_text) = outputs(events)
    assert write_status == shell_status == "error"
    assert write_text.startswith('Tool "write_file" not found')
    assert shell_text.startswith('Tool "run_shell_command" not found')
    # The model is told the same, and the run still ends with its answer.
    assert probe.model.seen[-1].tool_results == [write_text, shell_text]
    assert of_type(events, "message")[-1]["content"] == "Looked only."


READS = ["git show --stat {c}", "git diff {c}~0 {c}", "git log -1 --format=%H {c}"]
READS += ["git grep -F demo {c}"]
WRITES = [
    "git diff --output=../leak.txt {c} {c}",
    "git commit --allow-empty -m sneaky",
    "git tag sneaky {c}",
    "git show {c} > ../shown.txt",
    "git show {c} && touch chained.txt",
    "git show $(touch subst.txt)",
    "git show {c} | tee piped.txt",
    "git grep -Otouch demo {c}",
    "touch plain.txt",
]


async def test_the_reviewer_reads_git_and_writes_nothing(probe, tmp_path) -> None:
    repo = make_repo(tmp_path, {})
    commit = git(repo, "rev-parse", "HEAD")
    policy = tmp_path / "review-policy.toml"
    policy.write_text(REVIEW_POLICY)
    commands = [command.format(c=commit) for command in READS + WRITES]
    probe.model.script(*(Shell(command) for command in commands), Say("Reviewed."))
    result, events = await probe(repo, "Review.", "--policy", str(policy))

    assert result.ok, result.stderr_tail
    found = outputs(events)
    reads, writes = found[: len(READS)], found[len(READS) :]
    assert all(status == "success" for status, _ in reads), reads
    assert reads[0][1].startswith(f"commit {commit}") and reads[2][1] == commit
    assert "README.md:# demo" in reads[3][1]
    assert all(status == "error" for status, _ in writes), writes
    refused = ("denied by policy", "requires user confirmation")
    assert all(any(why in text for why in refused) for _, text in writes), writes
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "gemini-home",
        "home",
        "repo",
        "review-policy.toml",
    ]
    assert git(repo, "status", "--porcelain") == "" and git(repo, "tag") == ""
    assert git(repo, "rev-parse", "HEAD") == commit


async def test_resume_continues_the_session_with_its_history(probe, tmp_path) -> None:
    repo = make_repo(tmp_path, {})
    probe.model.script(Say("First part done."), Say("Second part done."))
    first, events = await probe(repo, "Start.", *YOLO)
    assert first.ok, first.stderr_tail
    session = events[0]["session_id"]
    second, events = await probe(repo, "Go on.", *YOLO, "--resume", session)

    assert second.ok, second.stderr_tail
    assert events[0]["session_id"] == session
    resumed = probe.model.seen[-1]
    assert resumed.user_texts == ["Start.", "Go on."]
    assert resumed.assistant_texts == ["First part done."]
    # Usage is the resumed invocation's own, not the session's.
    assert of_type(events, "result")[0]["stats"]["input_tokens"] == 100
    # Another working directory is another project: the session is not found there.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    third, events = await probe(elsewhere, "Again.", "--resume", session)
    assert (third.outcome, third.exit_code, events) == (Outcome.EXIT_NONZERO, 42, [])
    assert "No previous sessions found for this project" in third.stderr_tail


async def test_max_turns_ends_the_run_with_exit_53(probe, tmp_path) -> None:
    repo = make_repo(tmp_path, {})
    # A third request would find no scripted turn and fail the provider's check.
    probe.model.script(Shell("ls"), Shell("ls"))
    result, events = await probe(repo, "Loop.", *YOLO, env={"GEMINI_MAX_TURNS": "2"})

    assert (result.outcome, result.exit_code) == (Outcome.EXIT_NONZERO, 53)
    final = of_type(events, "result")[0]
    assert final["status"] == "error" and final["error"]["type"] == "FatalTurnLimitedError"
    assert len(probe.model.seen) == 2


async def test_a_projects_own_settings_and_hooks_are_ignored(probe, tmp_path) -> None:
    # With --skip-trust (not GEMINI_CLI_TRUST_WORKSPACE=true, measured) the CLI
    # reads settings before it trusts the folder: a repository's .gemini/settings.json
    # neither runs hooks nor changes the model.
    repo = make_repo(tmp_path, {})
    hooked = tmp_path / "hooked.txt"
    hook = {"name": "h", "type": "command", "command": f"touch {hooked}"}
    settings = {
        "model": {"name": "gemini-from-the-repository"},
        "hooks": {"SessionStart": [{"hooks": [hook]}]},
    }
    (repo / ".gemini").mkdir()
    (repo / ".gemini" / "settings.json").write_text(json.dumps(settings))
    probe.model.script(Say("ok"))
    # The model comes from the Gemini home's settings, which a workspace's would override.
    probe.settings(model={"name": MODEL})
    result, _ = await probe(repo, "Hi.", *YOLO, model_name=None)

    assert result.ok, result.stderr_tail
    assert not hooked.exists()
    assert probe.model.seen[0].model == MODEL


async def test_a_hanging_model_is_killed_with_its_whole_process_group(probe, tmp_path) -> None:
    # Without GEMINI_CLI_NO_RELAUNCH the CLI runs as a launcher that ignores SIGTERM
    # and a child: only the group signal ends both.
    repo = make_repo(tmp_path, {})
    probe.model.script(Hang())
    runner = asyncio.ensure_future(probe(repo, "Wait.", env={"GEMINI_CLI_NO_RELAUNCH": ""}))
    await asyncio.wait_for(probe.model.hanging.wait(), 60)
    group = [
        process
        for process in psutil.process_iter(["cmdline", "cwd"])
        if process.info["cwd"] == str(repo) and "--skip-trust" in (process.info["cmdline"] or [])
    ]
    assert len(group) == 2  # the launcher and the relaunched CLI
    runner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await runner
    _, alive = psutil.wait_procs(group, timeout=10)
    assert not alive
