"""Talking to the real Claude Code: how long a steer and an approval take inside the run.

One interactive run of the pinned `claude` (runners.runtimes.claude_talk, through
`run_model(..., conversation=...)`) against the scripted Messages provider on
127.0.0.1. The model runs a short command --rounds times; while each command runs
(`--command-s` seconds, the moment its step is reported) the bot steers, and the
provider notes when the request carrying that steer arrives. Then --rounds commands
that need an approval, which the bot allows at once; the provider notes when the
command's output arrives. Prints p50/p99 of:

- steer: `Conversation.steer()` to the provider receiving the text, less the time
  the command still ran (what the CLI waits for: a steer joins the running turn with
  the command's result), against the same span with no steer (the CLI's own pace);
- approval: the bot asked (`decide`) to the provider receiving the command's output
  (the answer's way to the CLI, the command, the CLI's next request).

Asserts nothing; needs the CLIs installed (scripts/test).

    .venv/bin/python bench/claude_talk.py [--rounds 50] [--command-s 0.3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runners.process import ProcessLimits  # noqa: E402
from runners.runtimes import ApprovalAsked, Conversation, Decision, Mode, run_model  # noqa: E402
from tests.pipeline.harness import make_repo  # noqa: E402
from tests.realcli import install  # noqa: E402
from tests.realcli.anthropic_messages import MessagesModel  # noqa: E402
from tests.realcli.clis import CLIS  # noqa: E402
from tests.realcli.harness import child_env, run_request  # noqa: E402
from tests.realcli.providers import Say, Seen, Shell  # noqa: E402


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:7.1f} ms   p99 {p99 * 1000:7.1f} ms"


async def main(rounds: int, command_s: float) -> None:
    bins = {"claude": install.binary("claude")}
    model = MessagesModel(CLIS["claude"].key)
    await model.start()
    steered: dict[str, float] = {}
    stepped: list[float] = []
    asked: list[float] = []
    steer_spans: list[float] = []
    quiet_spans: list[float] = []
    approval_spans: list[float] = []
    count = {"steer": 0, "approve": 0}
    command = f"sleep {command_s}"

    last = {"kind": ""}

    def respond(seen: Seen):
        now = time.monotonic()
        text = "\n".join(seen.tool_results + seen.user_texts)
        if last["kind"] == "sleep":
            hit = [key for key in steered if key in text]
            if hit:
                steer_spans.append(now - steered.pop(hit[0]) - command_s)
            else:
                quiet_spans.append(now - stepped[-1] - command_s)
        elif last["kind"] == "python":
            approval_spans.append(now - asked[-1])
        if count["steer"] < 2 * rounds:
            count["steer"] += 1
            last["kind"] = "sleep"
            return Shell(command)
        if count["approve"] < rounds:
            count["approve"] += 1
            last["kind"] = "python"
            return Shell(f"python3 -c 'print({count['approve']})'")
        last["kind"] = ""
        return Say("done")

    model.responder = respond
    conversation: Conversation

    async def decide(question: ApprovalAsked) -> Decision:
        asked.append(time.monotonic())
        return Decision(True)

    def on_step(step: str) -> None:
        if step != f"Bash: {command}":
            return
        stepped.append(time.monotonic())
        # Every other command runs with a steer, the rest show the CLI's own pace.
        if count["steer"] % 2 == 0:
            key = f"steer-{count['steer']}"
            steered[key] = time.monotonic()
            conversation.steer(f"Note {key} please.", key)

    conversation = Conversation(decide)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        repo = make_repo(root, {})
        request = run_request("claude", bins, model, root, repo, "Work.", mode=Mode.WORKSPACE_WRITE)
        result = await run_model(
            "claude",
            request,
            limits=ProcessLimits(timeout=1800, idle_timeout=120),
            base_env=child_env(root / "home"),
            conversation=conversation,
            on_step=on_step,
        )
    await model.stop()
    print(f"run: {result.outcome.value}, {result.failure or 'ok'}, {result.duration:.1f} s")
    print(
        f"steer -> provider, beyond the command ({len(steer_spans)}):  {percentiles(steer_spans)}"
    )
    print(f"no steer, the CLI's own pace ({len(quiet_spans)}):          {percentiles(quiet_spans)}")
    print(
        f"approval asked -> output at the provider ({len(approval_spans)}): "
        f"{percentiles(approval_spans)}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--command-s", type=float, default=0.3)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rounds, arguments.command_s))
