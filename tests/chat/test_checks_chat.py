"""The repository's checks in chat (issue 37 point 2): /status shows their verdict, time
and output's end; /deploy of a commit whose checks did not pass is refused naming the
way past it, and `--skip-checks` in the command itself deploys it."""

from __future__ import annotations

from chatbot.chat.commands import parse
from chatbot.domain.phases import Phase
from tests.chat.conftest import Env, msg

COMMIT = "c0ffee" * 6 + "abcd"


def record(verdict: str, commit: str = COMMIT) -> dict:
    return {
        "checks": {
            "commit": commit,
            "command": ["make", "test"],
            "verdict": verdict,
            "duration_s": 3.25,
            "exit_code": 2 if verdict == "failed" else 0,
            "tail": "test_login ... FAILED\n@room 1 failed",
        }
    }


def test_the_flag_is_part_of_retry_and_deploy() -> None:
    for name in ("retry", "deploy"):
        parsed = parse(f"/{name} login --skip-checks")
        assert not hasattr(parsed, "problem"), parsed
        assert parsed.args == {"slug": "login", "checks": "--skip-checks"}  # type: ignore[union-attr]
    assert parse("/deploy login").args == {"slug": "login", "checks": None}  # type: ignore[union-attr]


async def test_deploy_is_refused_until_the_owner_says_skip_checks(env: Env) -> None:
    await env.card("login", Phase.READY_FOR_DEPLOYMENT, commit_hash=COMMIT, data=record("failed"))
    status = (await env.one(msg("/status login"))).text
    assert "checks: failed in 3.2 s (make test)" in status
    assert "test_login ... FAILED" in status and "@\u200broom" in status  # no mention

    row = await env.one(msg("/deploy login"))
    assert row.text.startswith("Refused:"), row.text
    assert "did not pass" in row.text and "/deploy login --skip-checks" in row.text
    assert await env.jobs() == []

    row = await env.one(msg("/deploy login --skip-checks"))
    assert not row.text.startswith("Refused:"), row.text
    [job] = await env.jobs()
    assert job.kind == "deploy" and job.payload["commit"] == COMMIT


async def test_a_commit_whose_checks_passed_deploys_without_a_word(env: Env) -> None:
    await env.card("login", Phase.READY_FOR_DEPLOYMENT, commit_hash=COMMIT, data=record("passed"))
    row = await env.one(msg("/deploy login"))
    assert not row.text.startswith("Refused:"), row.text
    assert len(await env.jobs()) == 1
