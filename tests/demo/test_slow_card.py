"""The demo's slow card, driven at the console as a new user would: steer the working
agent, approve one command and deny another with a reason, interrupt its long test run,
then let it go on to review. The demo as shipped, its waits run four times faster."""

from __future__ import annotations

from pathlib import Path

from chatbot.app import demo
from tests.demo.serving import said, serving


def fast_demo(tmp_path: Path, scale: float = 0.25):
    config = demo.config(tmp_path, web="off")
    runtimes = {
        name: runtime.model_copy(update={"env": {**runtime.env, "FAKE_CLI_TIME_SCALE": str(scale)}})
        for name, runtime in config.runtimes.items()
    }
    return config.model_copy(update={"runtimes": runtimes})


async def test_steer_approve_deny_interrupt_and_go_on_on_the_slow_card(tmp_path: Path) -> None:
    config = fast_demo(tmp_path)
    async with serving(config) as (console, bot):
        await console.push("/start slow-demo")
        await said(console, r"slow-demo: builder run started", within=60)
        fetch = await said(console, r"the agent asks to run", within=60)
        assert "curl -fsS https://example.org/report-template.md" in fetch.text

        await console.push("/steer slow-demo keep it short")
        await said(console, r"steered by console:owner@localhost: keep it short")
        await console.push("/inbox")
        inbox = await said(console, r"Waiting for you")
        assert "🔐 slow-demo" in inbox.text and "/approve slow-demo" in inbox.text

        await console.push("/approve slow-demo")
        approved = await said(console, r"^👍 slow-demo")
        assert "curl" in approved.text
        push = await said(console, r"the agent asks to run", within=60)
        assert "git push origin card/slow-demo" in push.text
        # The steer was taken while the agent waited for the answer.
        await console.push("/deny slow-demo not from the network")
        denied = await said(console, r"^👎 slow-demo: denied")
        assert "git push" in denied.text and "Reason for the agent: not from the network" in (
            denied.text
        )
        # Next comes the long test run: stopped while it runs.
        await console.push("/interrupt slow-demo")
        await said(console, r"^⏸ slow-demo: interrupting the builder")
        waits = await said(console, r"^⏸ slow-demo: the run was interrupted", within=60)
        assert "/steer slow-demo <text> goes on in the same session" in waits.text
        assert (await bot.board.reads.card("slow-demo")).phase.value == "interrupted"

        await console.push("/steer slow-demo go on")
        await said(console, r"review approve", within=120)
        card = await bot.board.reads.card("slow-demo")
        assert card.phase.value == "ready_for_deployment"
        # Its own file, beside the other cards' (a second built card changes a file too).
        await console.push("/start hello-endpoint")
        await said(console, r"hello-endpoint: review approve", within=120)
    worktrees = tmp_path / "workspaces"
    assert (worktrees / "slow-demo" / "docs" / "demo" / "slow-demo.md").is_file()
    assert (worktrees / "hello-endpoint" / "docs" / "demo" / "hello-endpoint.md").is_file()
