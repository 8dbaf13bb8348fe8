"""The pure argv builders: exact command lines, validation before anything reaches argv."""

from __future__ import annotations

from pathlib import Path

import pytest

from runners.runtimes import InvalidRequest, Mode, RunRequest, build_invocation, claude, codex
from runners.runtimes.openrouter import API_KEY_ENV

CWD = Path("/srv/board/work")


def request(**overrides: object) -> RunRequest:
    fields: dict[str, object] = {"binary": "/usr/bin/codex", "cwd": CWD, "prompt": "do it"}
    fields.update(overrides)
    return RunRequest(**fields)  # type: ignore[arg-type]


def test_codex_read_only_exact_argv() -> None:
    invocation = build_invocation("codex", request())
    assert invocation.argv == (
        "/usr/bin/codex",
        "--ask-for-approval",
        "never",
        "--sandbox",
        "read-only",
        "-C",
        str(CWD),
        "exec",
        "--ignore-user-config",
        "--skip-git-repo-check",
        "--json",
        "--color",
        "never",
        "-",
    )
    assert invocation.stdin == "do it"
    assert invocation.cwd == CWD
    assert dict(invocation.secret_env_files) == {}


def test_codex_builder_model_effort_and_resume() -> None:
    invocation = build_invocation(
        "codex",
        request(
            mode=Mode.WORKSPACE_WRITE,
            model="gpt-5-codex",
            reasoning_effort="high",
            resume_session_id="0199a213-81c0-7800-8aa1-bbab2a035a53",
        ),
    )
    argv = list(invocation.argv)
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"
    assert argv[argv.index("--model") + 1] == "gpt-5-codex"
    assert argv[argv.index("-c") + 1] == 'model_reasoning_effort="high"'
    # model options are root options, before the subcommand
    assert argv.index("--model") < argv.index("exec")
    assert argv[-3:] == ["resume", "0199a213-81c0-7800-8aa1-bbab2a035a53", "-"]
    assert "do it" not in argv  # the prompt only ever goes through stdin


def test_claude_read_only_disallows_write_tools() -> None:
    invocation = build_invocation(
        "claude",
        request(
            binary="claude",
            allowed_tools=("Read",),
        ),
    )
    assert invocation.argv == (
        "claude",
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "dontAsk",
        "--setting-sources",
        "",
        "--allowedTools",
        "Read",
        "--disallowedTools",
        "Edit,Write,NotebookEdit",
    )
    assert invocation.stdin == "do it"


def test_claude_git_grants_come_with_their_writing_option_denied() -> None:
    # `git diff --output=FILE` writes a file, and a grant of `git diff *` lets it through.
    argv = build_invocation(
        "claude", request(binary="claude", allowed_tools=claude.REVIEW_GIT_TOOLS)
    ).argv
    assert argv[argv.index("--allowedTools") + 1] == (
        "Bash(git show *) Bash(git diff *) Bash(git log *)"
    )
    assert argv[argv.index("--disallowedTools") + 1] == (
        "Edit,Write,NotebookEdit,Bash(git * --output*)"
    )


def test_claude_builder_max_turns_model_effort_resume() -> None:
    argv = list(
        build_invocation(
            "claude",
            request(
                binary="claude",
                mode=Mode.WORKSPACE_WRITE,
                model="claude-sonnet-4-5",
                reasoning_effort="medium",
                max_turns=12,
                resume_session_id="abc-123",
            ),
        ).argv
    )
    assert argv[argv.index("--permission-mode") + 1] == "acceptEdits"
    assert "--disallowedTools" not in argv
    assert argv[argv.index("--max-turns") + 1] == "12"
    assert argv[argv.index("--model") + 1] == "claude-sonnet-4-5"
    assert argv[argv.index("--effort") + 1] == "medium"
    assert argv[argv.index("--resume") + 1] == "abc-123"


def test_openrouter_is_codex_with_a_provider_and_no_key_in_argv() -> None:
    invocation = build_invocation(
        "openrouter",
        request(model="anthropic/claude-sonnet-4.5", api_key_file=Path("/run/secrets/or")),
    )
    argv = list(invocation.argv)
    overrides = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-c"]
    assert overrides == [
        'model_provider="openrouter"',
        'model_providers.openrouter.name="OpenRouter"',
        'model_providers.openrouter.base_url="https://openrouter.ai/api/v1"',
        f'model_providers.openrouter.env_key="{API_KEY_ENV}"',
        'model_providers.openrouter.wire_api="responses"',
        "model_providers.openrouter.requires_openai_auth=false",
    ]
    assert argv[argv.index("--model") + 1] == "anthropic/claude-sonnet-4.5"
    assert argv[argv.index("--sandbox") + 1] == "read-only"
    assert argv[-1] == "-"
    assert dict(invocation.secret_env_files) == {API_KEY_ENV: Path("/run/secrets/or")}
    assert dict(invocation.env_extras) == {}


def _overrides(argv: tuple[str, ...]) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == "-c"]


def test_codex_base_url_is_a_custom_provider_with_the_key_from_its_file() -> None:
    invocation = build_invocation(
        "codex",
        request(base_url="http://127.0.0.1:8080/v1", api_key_file=Path("/run/secrets/gw")),
    )
    assert _overrides(invocation.argv) == [
        'model_provider="gateway"',
        'model_providers.gateway.name="Gateway"',
        'model_providers.gateway.base_url="http://127.0.0.1:8080/v1"',
        f'model_providers.gateway.env_key="{codex.GATEWAY_KEY_ENV}"',
        'model_providers.gateway.wire_api="responses"',
        "model_providers.gateway.requires_openai_auth=false",
    ]
    assert invocation.argv.index("-c") < invocation.argv.index("exec")
    assert dict(invocation.secret_env_files) == {codex.GATEWAY_KEY_ENV: Path("/run/secrets/gw")}


def test_codex_base_url_without_a_key_sends_none() -> None:
    invocation = build_invocation("codex", request(base_url="https://gw.example.org/v1"))
    assert not any("env_key" in value for value in _overrides(invocation.argv))
    assert dict(invocation.secret_env_files) == {}


def test_codex_without_base_url_ignores_a_key_file() -> None:
    # codex logs in by itself; the configuration refuses this combination earlier.
    invocation = build_invocation("codex", request(api_key_file=Path("/k")))
    assert _overrides(invocation.argv) == []
    assert dict(invocation.secret_env_files) == {}


def test_claude_base_url_and_key_go_to_the_environment_only() -> None:
    invocation = build_invocation(
        "claude",
        request(
            binary="claude", base_url="http://127.0.0.1:9000", api_key_file=Path("/run/secrets/a")
        ),
    )
    assert dict(invocation.env_extras) == {claude.BASE_URL_ENV: "http://127.0.0.1:9000"}
    assert dict(invocation.secret_env_files) == {claude.API_KEY_ENV: Path("/run/secrets/a")}
    assert not any("127.0.0.1" in arg or "secrets" in arg for arg in invocation.argv)


def test_openrouter_base_url_replaces_the_openrouter_endpoint() -> None:
    invocation = build_invocation(
        "openrouter",
        request(model="x/y", api_key_file=Path("/k"), base_url="http://127.0.0.1:7000/api/v1"),
    )
    assert 'model_providers.openrouter.base_url="http://127.0.0.1:7000/api/v1"' in _overrides(
        invocation.argv
    )


def test_openrouter_needs_a_model_and_a_key_file() -> None:
    with pytest.raises(InvalidRequest, match="model"):
        build_invocation("openrouter", request(api_key_file=Path("/k")))
    with pytest.raises(InvalidRequest, match="api_key_file"):
        build_invocation("openrouter", request(model="x/y"))


@pytest.mark.parametrize("runtime", ["codex", "claude", "openrouter"])
@pytest.mark.parametrize(
    "bad",
    [
        {"model": "--dangerously-bypass-approvals-and-sandbox"},
        {"model": "gpt 5"},
        {"model": "gpt-5\n--sandbox"},
        {"model": "x" * 200},
        {"reasoning_effort": "HIGH"},
        {"reasoning_effort": "high; rm -rf /"},
        {"reasoning_effort": "-c"},
        {"resume_session_id": "--last"},
        {"resume_session_id": "../../etc/passwd"},
        {"max_turns": 0},
        {"max_turns": True},
        {"binary": "--help"},
        {"cwd": Path("relative/dir")},
        {"allowed_tools": ("--dangerously-skip-permissions",)},
        {"allowed_tools": ("Bash(git *)\nWrite",)},
        {"allowed_tools": ("Read Write",)},
        {"base_url": "ftp://example.org"},
        {"base_url": 'http://x/"\nmodel="evil'},
        {"base_url": "http://x/ --sandbox"},
        {"base_url": "--http://x"},
    ],
)
def test_invalid_values_never_reach_argv(runtime: str, bad: dict[str, object]) -> None:
    fields: dict[str, object] = {"model": "vendor/model", "api_key_file": Path("/k")}
    fields.update(bad)
    with pytest.raises(InvalidRequest):
        build_invocation(runtime, request(**fields))


def test_unknown_runtime_is_refused() -> None:
    with pytest.raises(InvalidRequest, match="unknown runtime"):
        build_invocation("no-such-cli", request())


def test_reprs_hold_no_prompt() -> None:
    req = request(prompt="SECRET PLAN of the owner")
    assert "SECRET PLAN" not in repr(req)
    assert "SECRET PLAN" not in repr(build_invocation("codex", req))


def test_mode_from_configuration_text() -> None:
    assert request(mode="workspace_write").mode is Mode.WORKSPACE_WRITE
    with pytest.raises(InvalidRequest, match="unknown mode"):
        request(mode="write_everything")
