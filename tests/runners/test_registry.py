"""The runtime registry: each record's facts agree with its own argv builder and parsers,
and a new runtime is one module plus its registry line; config, the pins, `check` and
the runner pick it up with no other edit."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from runners import versions
from runners.runtimes import RUNTIMES, Grant, Invocation, RunRequest, Runtime, get_runtime
from runners.runtimes.base import KeyFile
from runners.runtimes.registry import HOMES, clis
from runners.scripted.stand_ins import STAND_INS

ROOT = Path(__file__).resolve().parents[2]
CWD = Path("/srv/board/work")
SESSION = "0199a213-81c0-7800-8aa1-bbab2a035a53"


def request(**overrides: object) -> RunRequest:
    fields: dict[str, object] = {
        "binary": "/usr/bin/cli",
        "cwd": CWD,
        "prompt": "do it",
        "model": "vendor/model",
        "api_key_file": Path("/k"),
        "home": Path("/srv/board/workspaces/.agent-homes/cli"),
    }
    fields.update(overrides)
    return RunRequest(**fields)  # type: ignore[arg-type]


@pytest.fixture(params=list(RUNTIMES))
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return RUNTIMES[request.param]


def test_the_registry_lists_each_runtime_once_by_its_module(runtime: Runtime) -> None:
    assert HOMES[runtime.name] == f"runners.runtimes.{runtime.name}"
    assert sys.modules[HOMES[runtime.name]].RUNTIME is runtime
    assert get_runtime(runtime.name) is runtime


def _started(invocation: Invocation) -> set[str]:
    """What reaches the CLI: its argv and its plain environment (a bound may go either way)."""
    return {*invocation.argv, *(f"{k}={v}" for k, v in invocation.env_extras.items())}


def test_resume_turn_bound_and_effort_are_what_the_invocation_does(runtime: Runtime) -> None:
    plain = _started(runtime.build_argv(request()))
    resumed = _started(runtime.build_argv(request(resume_session_id=SESSION)))
    assert (SESSION in resumed) is runtime.resumes
    bounded = _started(runtime.build_argv(request(max_turns=7))) - plain
    assert any("7" in item for item in bounded) is runtime.bounds_turns
    effort = _started(runtime.build_argv(request(reasoning_effort="high"))) - plain
    assert any("high" in item for item in effort) is runtime.takes_effort


def test_every_grant_is_written_in_the_clis_syntax_and_reaches_a_valid_argv(
    runtime: Runtime,
) -> None:
    for grant in Grant:
        rules = runtime.tool_rules([grant])
        runtime.build_argv(request(allowed_tools=rules))  # refuses a malformed rule
    assert runtime.tool_rules([]) == ()


def test_claude_writes_the_git_reads_as_its_tool_rules_codex_needs_none() -> None:
    assert RUNTIMES["claude"].tool_rules([Grant.GIT_READS]) == (
        "Bash(git show *)",
        "Bash(git diff *)",
        "Bash(git log *)",
    )
    assert RUNTIMES["codex"].tool_rules([Grant.GIT_READS]) == ()


def test_a_record_without_a_rule_for_a_grant_is_refused_at_import() -> None:
    codex = RUNTIMES["codex"]
    with pytest.raises(ValueError, match="no rules for the grants"):
        Runtime(**{**_fields(codex), "grants": {}})
    with pytest.raises(ValueError, match="invalid tool rule"):
        Runtime(**{**_fields(codex), "grants": {Grant.GIT_READS: ("--yolo",)}})


def test_a_runtime_checks_its_rules_in_its_own_syntax() -> None:
    # A CLI whose grants are command prefixes, not claude's `Bash(git show *)`.
    prefixes = re.compile(r"^git [a-z]+$")
    fields = {**_fields(RUNTIMES["codex"]), "rule_re": prefixes}
    Runtime(**{**fields, "grants": {Grant.GIT_READS: ("git show", "git log")}})
    with pytest.raises(ValueError, match="invalid tool rule"):
        Runtime(**{**fields, "grants": {Grant.GIT_READS: ("Bash(git show *)",)}})
    with pytest.raises(ValueError, match="invalid tool rule"):
        Runtime(**{**fields, "grants": {Grant.GIT_READS: ("git show; touch x",)}})


def _fields(runtime: Runtime) -> dict[str, object]:
    return {name: getattr(runtime, name) for name in Runtime.__dataclass_fields__}


def test_progress_is_read_from_the_event_stream_where_the_cli_has_one(runtime: Runtime) -> None:
    assert runtime.progress is (runtime.step_of is not None)
    assert runtime.progress  # all three print one JSON event per line


def test_the_pins_are_the_records() -> None:
    assert versions.TESTED == {cli.command: (cli.package, cli.tested) for cli in clis()}
    for name, runtime in RUNTIMES.items():
        assert versions.tested_version(name) == runtime.cli.tested
        assert versions.TESTED[runtime.cli.command] == (runtime.cli.package, runtime.cli.tested)
    # openrouter runs the codex program: one pin for both.
    assert RUNTIMES["openrouter"].cli is RUNTIMES["codex"].cli
    assert len(clis()) == len({runtime.cli.command for runtime in RUNTIMES.values()})


def test_key_file_rules() -> None:
    required = KeyFile(required=True, problem="needs one")
    with_url = KeyFile(needs_base_url=True, problem="needs base_url")
    assert required.problem_with(None, None) == "needs one"
    assert required.problem_with(Path("/k"), None) is None
    assert with_url.problem_with(Path("/k"), None) == "needs base_url"
    assert with_url.problem_with(Path("/k"), "http://gw/v1") is None
    assert with_url.problem_with(None, None) is None
    assert KeyFile().problem_with(Path("/k"), None) is None


def test_each_stand_in_imitates_a_registered_cli_and_is_installed_as_a_script() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    commands = {cli.command for cli in clis()}
    for command in STAND_INS:
        assert command in commands
        assert scripts[f"intent-board-scripted-{command}"] == f"runners.scripted.{command}:main"


# A runtime that did not exist: the codex program under another name and pin, which
# insists on a key file. Nothing but this module and the registry's line is written.
ECHO = '''
"""A runtime added for the test: codex's argv and parsers, a pin and rules of its own."""

from runners.runtimes import codex
from runners.runtimes.base import Cli, Invocation, KeyFile, Runtime

NAME = "echo"
CLI = Cli("echo-cli", "@example/echo-cli", "3.2.1")


def build_argv(request):
    built = codex.build_argv(request)
    # Its settings live in the home the bot gives it, written before it starts.
    files = {request.home / "settings.json": '{"echo": true}'} if request.home else {}
    return Invocation(NAME, built.argv, built.cwd, built.stdin, files=files)


RUNTIME = Runtime(
    name=NAME,
    cli=CLI,
    build_argv=build_argv,
    parse_output=codex.parse_output,
    step_of=None,
    grants=codex.RUNTIME.grants,
    reports_cost=False,
    bounds_turns=True,
    resumes=False,
    key_file=KeyFile(required=True, problem="echo wants its key file"),
)
'''

PROBE = r"""
import asyncio, json, sys
from pathlib import Path
from chatbot.config import ConfigError, parse_config
from runners import versions
from runners.runtimes import RUNTIMES, RunRequest, build_invocation, run_model
from tests.contracts.test_names_compared import REGISTRIES

text = '''
[bot]
owners = ["owner@example.org"]
repo = "repo"
[runtimes.codex]
binary = "codex"
[runtimes.echo]
binary = "echo-cli"
%s
[lanes.light]
runtime = "echo"
model = "m"
iteration_limit = 10
'''
folder = Path(sys.argv[1])
(folder / "key").write_text("k\n")
config = parse_config(text % 'api_key_file = "key"', folder / "bot.toml")
try:
    parse_config(text % "", folder / "bot.toml")
    refused = None
except ConfigError as error:
    refused = str(error)
try:
    keyed = text % 'api_key_file = "key"'
    parse_config(keyed.replace('runtime = "echo"', 'runtime = "nope"'), folder / "bot.toml")
except ConfigError as error:
    unknown = str(error)
argv = build_invocation("echo", RunRequest("echo-cli", folder, "hi")).argv
# No echo-cli is installed: the run fails to start, after its files were written.
ran = asyncio.run(run_model("echo", RunRequest("echo-cli", folder, "hi", home=folder / "home")))
print(json.dumps({
    "ran": ran.failure,
    "settings": (folder / "home" / "settings.json").read_text(),
    "lane": config.allowed_profiles().lanes["light"].runtime,
    "refused": refused,
    "unknown": unknown,
    "pins": versions.TESTED,
    "tested": versions.tested_version("echo"),
    "argv0": argv[0],
    "home": REGISTRIES[0].homes["echo"],
    "names": list(RUNTIMES),
}))
"""


def test_a_new_runtime_is_its_module_and_its_registry_line(tmp_path: Path) -> None:
    overlay = tmp_path / "overlay"
    shutil.copytree(ROOT / "runners", overlay / "runners")
    (overlay / "runners" / "runtimes" / "echo.py").write_text(ECHO)
    registry = overlay / "runners" / "runtimes" / "registry.py"
    text = registry.read_text()
    text, imports = re.subn(
        r"^from runners\.runtimes import (.+)$",
        r"from runners.runtimes import \1, echo",
        text,
        flags=re.MULTILINE,
    )
    text, listed = re.subn(r"^_MODULES = \((.+)\)$", r"_MODULES = (\1, echo)", text, flags=re.M)
    assert (imports, listed) == (1, 1)
    registry.write_text(text)
    folder = tmp_path / "bot"
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
        # Not the source tree: `-c` puts the working folder first on sys.path.
        cwd=tmp_path,
        env={"PYTHONPATH": f"{overlay}:{ROOT}", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["lane"] == "echo"
    assert seen["refused"].endswith("runtimes.echo.api_key_file: echo wants its key file")
    assert seen["unknown"].endswith("'nope' is not one of " + ", ".join([*RUNTIMES, "echo"]))
    assert seen["pins"]["echo-cli"] == ["@example/echo-cli", "3.2.1"]
    assert seen["tested"] == "3.2.1" and seen["argv0"] == "echo-cli"
    assert seen["home"] == "runners.runtimes.echo"
    assert seen["names"] == [*RUNTIMES, "echo"]
    assert seen["ran"] == "echo: binary not found: echo-cli"
    assert seen["settings"] == '{"echo": true}'
