"""The OpenRouter key: read at spawn time, only in that child's env, never in argv, logs, reprs."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from runners.runtimes import KeyFileError, RunRequest, build_invocation, openrouter, run_model
from runners.runtimes.openrouter import API_KEY_ENV
from tests.runners.conftest import FAKE_CODEX, FAST, FakeCli

KEY = "sk-or-v1-5ecret0123456789abcdef"


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "openrouter.key"
    path.write_text(KEY + "\n")
    path.chmod(0o600)
    return path


def openrouter_request(cwd: Path, key_file: Path | None, **kw) -> RunRequest:
    return RunRequest(
        binary=FAKE_CODEX,
        cwd=cwd,
        prompt="ROLE=researcher",
        model="deepseek/deepseek-r1",
        api_key_file=key_file,
        **kw,
    )


async def test_key_reaches_only_the_openrouter_child(
    fake_cli: FakeCli, workdir: Path, key_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_cli.write(
        {
            "cli": "codex",
            "match": "ROLE=researcher",
            "answer": "r",
            "expect_env": {API_KEY_ENV: KEY},
        },
        {"cli": "codex", "match": "ROLE=reviewer", "answer": "v", "forbid_env": [API_KEY_ENV]},
    )
    request = openrouter_request(workdir, key_file)
    result = await run_model("openrouter", request, base_env=fake_cli.env, limits=FAST)
    assert result.ok, result.failure
    plain = RunRequest(binary=FAKE_CODEX, cwd=workdir, prompt="ROLE=reviewer")
    other = await run_model("codex", plain, base_env=fake_cli.env, limits=FAST)
    assert other.ok, other.failure

    openrouter_call, codex_call = fake_cli.calls()
    assert API_KEY_ENV in openrouter_call["env_keys"]
    assert API_KEY_ENV not in codex_call["env_keys"]
    assert openrouter_call["config"]["model_provider"] == "openrouter"
    assert all(KEY not in arg for arg in openrouter_call["argv"])
    assert API_KEY_ENV not in os.environ
    assert KEY not in caplog.text
    assert "argv:" in caplog.text  # the argv was logged, without the key
    for shown in (request, build_invocation("openrouter", request), result, result.output):
        assert KEY not in repr(shown)
    assert KEY not in fake_cli.log.read_text()


async def test_a_key_echoed_by_the_cli_is_redacted(
    fake_cli: FakeCli, workdir: Path, key_file: Path
) -> None:
    fake_cli.write({"no_output": True, "exit_code": 1, "stderr": f"401 for key {KEY}"})
    result = await run_model(
        "openrouter", openrouter_request(workdir, key_file), base_env=fake_cli.env, limits=FAST
    )
    assert not result.ok
    assert KEY not in result.failure and KEY not in result.stderr_tail
    assert "[redacted]" in result.failure


async def test_without_the_key_the_cli_refuses(fake_cli: FakeCli, workdir: Path) -> None:
    # The fake insists on the variable named by env_key, as codex does.
    fake_cli.write({"answer": "x"})
    argv = build_invocation("openrouter", openrouter_request(workdir, Path("/k"))).argv
    from runners.process import run_process

    result = await run_process(argv, cwd=workdir, stdin="p", base_env=fake_cli.env, limits=FAST)
    assert result.exit_code == 1
    # The real codex fails the turn in its JSON output, which the parser reports.
    failure = openrouter.parse_output(result.stdout).failure
    assert failure == f"codex turn failed: Missing environment variable: `{API_KEY_ENV}`."


@pytest.mark.parametrize("content", [None, "", "  \n"])
async def test_unusable_key_file(
    fake_cli: FakeCli, workdir: Path, tmp_path: Path, content: str | None
) -> None:
    path = tmp_path / "missing.key"
    if content is not None:
        path.write_text(content)
    fake_cli.write({"answer": "x"})
    with pytest.raises(KeyFileError, match=str(path)):
        await run_model("openrouter", openrouter_request(workdir, path), base_env=fake_cli.env)
    assert fake_cli.calls() == []
