"""Capture what the real CLIs print when the provider's quota or rate limit is spent.

    .venv/bin/python -m tests.realcli.capture_quota [FOLDER]

Each scenario makes the scripted provider refuse every request the way the vendor's API
does (HTTP 429 with its error body and `retry-after`), runs the pinned CLI one-shot
through `run_model`, and writes `<scenario>.json`: the CLI's stdout, the tail of its
stderr, its exit code, how many requests it made (its own retries) and how long it took.
The unit tests read them (tests/runners/test_quota.py). Run it again when the pin moves.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from runners.process import ProcessLimits, run_process
from runners.runtimes import RUNTIMES, build_invocation
from runners.runtimes.run import write_files
from tests.pipeline.harness import make_repo
from tests.realcli import install
from tests.realcli.clis import CLIS
from tests.realcli.harness import child_env, run_request
from tests.realcli.providers import Refuse

DATA = Path(__file__).resolve().parents[1] / "runners" / "data" / "quota"
LIMITS = ProcessLimits(timeout=120, idle_timeout=120, kill_grace=1.0)
# A reset time the CLI can pass on: 2030-01-01T00:00:00Z.
RESET_AT = 1893456000

# What the vendors' APIs answer, as they document it.
SCENARIOS: dict[str, tuple[str, Refuse]] = {
    # OpenAI: a rate limit per minute (error code rate_limit_exceeded, retry-after).
    "codex_rate_limit": (
        "codex",
        Refuse(
            {
                "error": {
                    "message": "Rate limit reached for gpt-5-codex in organization org-loop on "
                    "tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please "
                    "try again in 20s. Visit https://platform.openai.com/account/rate-limits "
                    "to learn more.",
                    "type": "tokens",
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
            },
            headers={"retry-after": "20"},
        ),
    ),
    # OpenAI: the account's quota is spent (insufficient_quota).
    "codex_quota": (
        "codex",
        Refuse(
            {
                "error": {
                    "message": "You exceeded your current quota, please check your plan and "
                    "billing details.",
                    "type": "insufficient_quota",
                    "param": None,
                    "code": "insufficient_quota",
                }
            }
        ),
    ),
    # ChatGPT plans: the usage limit, with its reset time.
    "codex_usage_limit": (
        "codex",
        Refuse(
            {
                "error": {
                    "type": "usage_limit_reached",
                    "message": "The usage limit has been reached",
                    "plan_type": "plus",
                    "resets_at": RESET_AT,
                    "resets_in_seconds": 3600,
                }
            }
        ),
    ),
    # Anthropic: rate_limit_error with retry-after and the unified reset headers.
    "claude_rate_limit": (
        "claude",
        Refuse(
            {
                "type": "error",
                "error": {
                    "type": "rate_limit_error",
                    "message": "This request would exceed the rate limit for your "
                    "organization of 30,000 input tokens per minute. Please try again later.",
                },
            },
            headers={
                "retry-after": "20",
                "anthropic-ratelimit-unified-status": "rejected",
                "anthropic-ratelimit-unified-reset": str(RESET_AT),
            },
        ),
    ),
}


async def capture(folder: Path, name: str, cli: str, refusal: Refuse) -> dict[str, Any]:
    bins = {command: install.binary(command) for command in ("codex", "claude")}
    model = CLIS[cli].provider(CLIS[cli].key)
    await model.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            repo = make_repo(root, {})
            model.responder = lambda seen: refusal
            env = child_env(root / "home")
            env["CLAUDE_CODE_MAX_RETRIES"] = "0"
            began = time.monotonic()
            request = run_request(cli, bins, model, root, repo, "Say hello.")
            invocation = build_invocation(cli, request)
            write_files(invocation.files)
            secrets = {
                variable: path.read_text().strip()
                for variable, path in invocation.secret_env_files.items()
            }
            process = await run_process(
                invocation.argv,
                cwd=invocation.cwd,
                stdin=invocation.stdin,
                base_env=env,
                extra_env={**invocation.env_extras, **secrets},
                limits=LIMITS,
            )
            took = time.monotonic() - began
    finally:
        await model.stop()
    record = {
        "cli": cli,
        "pin": RUNTIMES[cli].cli.pin,
        "refusal": {"status": refusal.status, "headers": dict(refusal.headers)},
        "requests": model.refused,
        "seconds": round(took, 1),
        "exit_code": process.exit_code,
        "stdout": process.stdout,
        "stderr_tail": process.stderr_tail[-3000:],
    }
    (folder / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
    return record


async def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    wanted = sys.argv[2:] or list(SCENARIOS)
    for name in wanted:
        cli, refusal = SCENARIOS[name]
        record = await capture(folder, name, cli, refusal)
        print(name, record["requests"], "requests", record["seconds"], "s", record["exit_code"])


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DATA))
