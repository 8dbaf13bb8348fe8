"""The repository's checks (issue 37 point 2) below the pipeline: `[checks]` and an
intent's `Checks:` line validated alike, the run bounded in time and output with no
secret in its environment, sandboxed when bubblewrap is there, and what the deploy
gate, `card --json`, `chatbot check` and /metrics make of its record."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

import pytest

from chatbot.config import ConfigError, parse_config
from chatbot.domain import checks as rules
from chatbot.pipeline import gate, sandboxing
from chatbot.store import Store
from runners.checks import Verdict, intent_line, run_checks
from runners.sandbox import find_tool
from runners.workspace import create_worktree
from tests.board.test_cli import CONFIG, FAKE_CODEX
from tests.board.test_config import MINIMAL
from tests.inprocess import in_thread


def _alive(pid: int) -> bool:
    """Running, not a zombie nobody has reaped yet (in a container, pid 1 may not)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    return fields[0] != "Z"


def config_of(tmp_path: Path, extra: str):
    return parse_config(MINIMAL + extra, tmp_path / "bot.toml")


def test_the_command_is_an_argv_list_checked_like_an_intent_line(tmp_path: Path) -> None:
    config = config_of(tmp_path, '[checks]\ncommand = ["make", "test"]\ntimeout_s = 30\n')
    assert config.checks.command == ["make", "test"] and config.checks.tail_chars == 4000
    assert config_of(tmp_path, "").checks.command == []  # no section: no checks
    with pytest.raises(ConfigError, match="checks.command.*control character"):
        config_of(tmp_path, '[checks]\ncommand = ["make", "te\\u0007st"]\n')
    with pytest.raises(ConfigError, match="checks.command"):
        config_of(tmp_path, '[checks]\ncommand = "make test"\n')  # a shell line: no
    assert intent_line("# T\n\nChecks: none\n") == ("none", None)
    assert intent_line("# T\n\n- the checks: all green\n  Checks: x\n") is None  # prose
    assert intent_line("# T\n\nChecks: `pytest -q tests/unit`\n") == (
        "command",
        ["pytest", "-q", "tests/unit"],
    )
    assert intent_line("# T\n\nNo checks line here.\n") is None
    with pytest.raises(ValueError, match="Checks: line cannot be read"):
        intent_line('Checks: sh -c "unclosed\n')
    with pytest.raises(ValueError, match="Checks: none"):
        intent_line("Checks: \n")


async def test_a_hanging_check_is_killed_at_its_limit_and_the_output_is_a_bounded_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XMPP_PASSWORD", "hunter2-in-the-bots-environment")
    marker = tmp_path / "child-pid"
    # A child that would outlive its parent: the whole group goes at the time limit.
    hang = ["sh", "-c", f"sleep 60 & echo $! > {marker}; echo started; wait"]
    started = time.monotonic()
    result = await run_checks(hang, tmp_path, timeout_s=1, tail_chars=300)
    took = time.monotonic() - started
    assert result.verdict is Verdict.TIMEOUT and 1 <= took < 10, took
    assert result.tail.startswith("started") and "time limit" in result.tail
    # SIGTERM then SIGKILL went to the whole group; a grandchild's end is no event this
    # process can await (it is not our child), so it is looked for within a bound.
    child, deadline = int(marker.read_text()), time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not _alive(child)

    flood = ["sh", "-c", "env; seq 1 100000; echo the-last-line >&2; exit 4"]
    result = await run_checks(flood, tmp_path, timeout_s=20, tail_chars=300)
    assert result.verdict is Verdict.FAILED and result.exit_code == 4
    assert len(result.tail) <= 300 and result.tail.endswith("the-last-line")
    assert "hunter2" not in result.tail  # not in the environment the checks get
    missing = await run_checks(["no-such-checks-program"], tmp_path, timeout_s=5, tail_chars=300)
    assert missing.verdict is Verdict.ERROR and "not an executable" in missing.tail


@pytest.mark.skipif(find_tool() is None, reason="bubblewrap (bwrap) is not installed")
async def test_the_checks_run_in_the_agents_sandbox(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    (tmp_path / "bot.secret").write_text("a-secret-of-the-bot\n")
    config = config_of(tmp_path, '[checks]\ncommand = ["sh"]\n')
    (tmp_path / "bot.toml").write_text(MINIMAL)
    tree = await create_worktree(repo, config.bot.workspaces, "card", "main")
    program = "/bin/sh"
    sandbox = sandboxing.for_checks(config, tree.path, program)
    assert sandbox is not None
    script = (
        f"cat {tmp_path / 'bot.toml'} || echo no-config; "
        "echo built > out.txt && git rev-parse --short HEAD && echo wrote; "
        "echo interfaces: $(grep -c : /proc/net/dev)"
    )
    result = await run_checks(
        ["sh", "-c", script], tree.path, timeout_s=20, tail_chars=2000, sandbox=sandbox
    )
    assert "owners" not in result.tail and "no-config" in result.tail  # the bot's config
    assert "wrote" in result.tail and (tree.path / "out.txt").read_text() == "built\n"
    assert "interfaces: 1" in result.tail  # its own network: the loopback only


def test_deploy_is_held_unless_the_checks_passed_on_that_very_commit() -> None:
    passed = {"commit": "a" * 40, "verdict": "passed", "duration_s": 1.5}
    assert rules.deploy_refusal(passed, "c", "a" * 40) is None
    assert rules.deploy_refusal(None, "c", "a" * 40) is None  # made with no checks set
    refusal = rules.deploy_refusal(passed, "c", "b" * 40)
    assert refusal is not None and "/deploy c --skip-checks" in refusal
    failed = {"commit": "a" * 40, "verdict": "failed", "duration_s": 2, "command": ["t"]}
    assert "failed in 2.0 s (t)" in (rules.deploy_refusal(failed, "c", "a" * 40) or "")
    assert rules.record_of(failed, "a" * 40) == failed
    assert rules.record_of(failed, "b" * 40) is None


def test_chatbot_check_names_a_program_that_is_not_there(tmp_path: Path) -> None:
    intents = tmp_path / "repo" / "docs" / "intent"
    intents.mkdir(parents=True)
    (intents / "own.md").write_text("# Own\n\nChecks: ./scripts/nothing-here.sh\n")
    (intents / "bad.md").write_text('# Bad\n\nChecks: sh -c "open\n')
    (intents / "fine.md").write_text("# Fine\n\nChecks: none\n")
    config = config_of(tmp_path, '[checks]\ncommand = ["sh", "-c", "true"]\n')
    lines = gate.check_lines(config)
    assert lines[0][1] and lines[0][0].startswith("checks: sh -c true after each")
    said = {line.strip().split(":")[0]: ok for line, ok in lines[1:]}
    assert said == {"docs/intent/own.md": False, "docs/intent/bad.md": False}
    missing = config_of(tmp_path, '[checks]\ncommand = ["no-such-checks-program"]\n')
    line, ok = gate.check_lines(missing)[0]
    assert not ok and "not an executable file on the PATH" in line


def test_the_card_page_shows_the_checks_escaped() -> None:
    from chatbot.web.card_page import _checks
    from chatbot.web.texts import Texts

    data = {
        "checks": {
            "commit": "a" * 40,
            "command": ["make", "test"],
            "verdict": "failed",
            "duration_s": 12.34,
            "tail": "<script>alert(1)</script>\nFAILED test_login",
        }
    }
    html = _checks(data["checks"], "a" * 40, Texts("en"))
    assert 'class="checks checks-failed"' in html
    assert "Checks of aaaaaaaaaaaa: failed in 12.3 s (make test)" in html
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert _checks(data["checks"], "b" * 40, Texts("en")) == ""  # another commit: not its result


async def test_the_cli_deploys_past_failed_checks_only_when_told(tmp_path: Path) -> None:
    (tmp_path / "repo" / "docs" / "intent").mkdir(parents=True)
    (tmp_path / "repo" / "docs" / "intent" / "alpha.md").write_text("# Alpha\n")
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    config = tmp_path / "bot.toml"
    config.write_text(CONFIG.format(fake_codex=FAKE_CODEX))
    assert (
        await in_thread("cards", "--config", str(config))
    ).returncode == 0  # imports the intents
    store = await Store.open(config.parent / "var" / "board.sqlite3")
    try:
        async with store.transaction() as db:
            failed = {"commit": "a" * 40, "verdict": "failed", "duration_s": 1.0, "command": ["t"]}
            await db.execute(
                "UPDATE cards SET phase = ?, commit_hash = ?, data = ? WHERE slug = ?",
                ("ready_for_deployment", "a" * 40, json.dumps({"checks": failed}), "alpha"),
            )
    finally:
        await store.close()
    refused = await in_thread("deploy", "alpha", "--config", str(config))
    assert refused.returncode == 1 and "/deploy alpha --skip-checks" in refused.stderr
    told = await in_thread("deploy", "alpha", "--skip-checks", "--config", str(config))
    assert told.returncode == 0, told.stderr
    shown = json.loads((await in_thread("card", "alpha", "--json", "--config", str(config))).stdout)
    assert shown["checks"]["verdict"] == "failed"
