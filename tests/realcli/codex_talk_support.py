"""What the real-CLI tests of a codex run the bot talks to share: the bot's side of
the conversation, a model that echoes what it received, a builder's request."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runners.process import ProcessLimits
from runners.runtimes import ApprovalAsked, Conversation, Decision, Mode, Told, run_model
from tests.realcli.harness import child_env, run_request
from tests.realcli.providers import Say, Seen

LIMITS = ProcessLimits(timeout=90, idle_timeout=60, kill_grace=1.0)


class Bot:
    """The bot's side of one run: what it was told, what it was asked, how it decides."""

    def __init__(self, decide: Callable[[ApprovalAsked], Decision] | None = None) -> None:
        self.told: list[Told] = []
        self.asked: list[ApprovalAsked] = []
        self._decide = decide
        self.conversation = Conversation(self.decide, self.told.append)

    async def decide(self, asked: ApprovalAsked) -> Decision:
        self.asked.append(asked)
        assert self._decide is not None, f"nothing should be asked: {asked}"
        return self._decide(asked)


def heard(seen: Seen) -> Say:
    """A model that says what it received: the user texts and the last tool result."""
    results = seen.tool_results[-1:] or ["no tool result"]
    return Say(f"heard: {' | '.join(seen.user_texts)} || {results[0]}")


def write_request(model, cli_bins, tmp_path: Path, repo: Path, prompt: str, **fields):
    return run_request(
        "codex",
        cli_bins,
        model,
        tmp_path,
        repo,
        prompt,
        mode=Mode.WORKSPACE_WRITE,
        reasoning_effort="high",
        **fields,
    )


async def talk(request, conversation: Conversation, home: Path, runtime: str = "codex", **more):
    """One run the bot talks to, with a HOME of the test's own."""
    return await run_model(
        runtime,
        request,
        limits=LIMITS,
        base_env=child_env(home),
        conversation=conversation,
        **more,
    )
