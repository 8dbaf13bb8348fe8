"""The scripted `claude` talks as the real one (tests/runners/data/claude_talk/ holds what
the real one said): the demo and the pipeline tests run builders through
`run_model(..., conversation=...)` on it."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from runners.runtimes import (
    ApprovalAsked,
    Conversation,
    Decision,
    Mode,
    Refused,
    RunRequest,
    Taken,
    Told,
    claude,
    run_model,
)
from runners.runtimes.claude_talk import INTERRUPTED
from tests.runners.conftest import FAKE_CLAUDE, FAST, FakeCli


class Owner:
    def __init__(self) -> None:
        self.told: list[Told] = []
        self.asked: list[ApprovalAsked] = []
        self.conversation = Conversation(self._decide, self.told.append)

    async def _decide(self, asked: ApprovalAsked) -> Decision:
        self.asked.append(asked)
        return Decision(False, "not expected")


def request(cwd: Path, mode: Mode = Mode.WORKSPACE_WRITE, **fields) -> RunRequest:
    return RunRequest(
        binary=FAKE_CLAUDE, cwd=cwd, prompt="ROLE=builder Build it.", mode=mode, **fields
    )


@pytest.mark.parametrize("mode", list(Mode))
async def test_a_run_through_the_protocol_answers_from_the_scenario(
    fake_cli: FakeCli, workdir: Path, mode: Mode
) -> None:
    fake_cli.write(
        {
            "answer": "built",
            "session_id": "s-1",
            "usage": {"input_tokens": 10, "output_tokens": 5},
            "files": {"app.py": "print(1)\n"},
        }
    )
    owner = Owner()
    result = await run_model(
        "claude",
        request(workdir, mode, max_turns=8, model="claude-sonnet-4-5"),
        limits=FAST,
        base_env=fake_cli.env,
        conversation=owner.conversation,
    )
    assert result.ok, (result.failure, result.stderr_tail)
    assert result.output.answer == "built"
    assert result.output.session_id == "s-1"
    assert result.output.usage is not None and result.output.usage.output_tokens == 5
    assert owner.told == [] and owner.asked == []
    (call,) = fake_cli.calls()
    assert call["stdin"] == "ROLE=builder Build it."
    assert (workdir / "app.py").exists() == (mode is Mode.WORKSPACE_WRITE)


async def test_a_steer_during_a_step_is_taken_in_that_turn(
    fake_cli: FakeCli, workdir: Path
) -> None:
    fake_cli.write({"answer": "done", "steps": [{"command": "make"}], "step_delay": 1.0})
    owner = Owner()

    def on_step(step: str) -> None:
        owner.conversation.steer("Use tabs.", "steer-1")

    result = await run_model(
        "claude",
        request(workdir),
        limits=FAST,
        base_env=fake_cli.env,
        conversation=owner.conversation,
        on_step=on_step,
    )
    assert result.ok, result.failure
    assert result.output.answer == "done"
    assert owner.told == [Taken("steer-1")]


async def test_an_interrupt_during_a_step_ends_the_turn_and_keeps_the_session(
    fake_cli: FakeCli, workdir: Path
) -> None:
    fake_cli.write(
        {"answer": "never", "session_id": "s-2", "steps": [{"command": "make"}], "step_delay": 60}
    )
    owner = Owner()

    def on_step(step: str) -> None:
        owner.conversation.steer("Then this.", "steer-2")
        owner.conversation.interrupt()

    result = await run_model(
        "claude",
        request(workdir),
        limits=FAST,
        base_env=fake_cli.env,
        conversation=owner.conversation,
        on_step=on_step,
    )
    assert result.ok, result.failure
    assert result.output.interrupted and result.output.failure is None
    assert result.output.session_id == "s-2"
    assert owner.told == [Refused("steer-2", INTERRUPTED)]


async def test_an_interrupt_reaches_a_turn_whose_model_hangs(
    fake_cli: FakeCli, workdir: Path, tmp_path: Path
) -> None:
    started = tmp_path / "started.fifo"
    os.mkfifo(started)
    reader = os.open(started, os.O_RDONLY | os.O_NONBLOCK)
    running = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(reader, running.set)
    fake_cli.write({"answer": "never", "hang": "before_output", "touch_file": str(started)})
    owner = Owner()

    async def interrupt() -> None:
        await running.wait()
        owner.conversation.interrupt()

    interrupter = asyncio.ensure_future(interrupt())
    try:
        result = await run_model(
            "claude",
            request(workdir),
            limits=FAST,
            base_env=fake_cli.env,
            conversation=owner.conversation,
        )
    finally:
        loop.remove_reader(reader)
        os.close(reader)
        interrupter.cancel()
    assert result.ok, result.failure
    assert result.output.interrupted


def test_the_interactive_command_lines_we_build_are_the_real_ones(
    fake_cli: FakeCli, workdir: Path
) -> None:
    fake_cli.write({"answer": "accepted", "repeat": True})
    argv = list(claude.talk_argv(request(workdir)).argv)
    message = '{"type": "user", "uuid": "u-1", "message": {"role": "user", "content": "p"}}\n'
    done = subprocess.run(
        argv, input=message, env=fake_cli.env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert '"isReplay": true' in done.stdout and '"result": "accepted"' in done.stdout
    # Nothing written: it ends quietly, as the real one.
    done = subprocess.run(argv, input="", env=fake_cli.env, capture_output=True, timeout=30)
    assert (done.returncode, done.stdout) == (0, b"")


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--input-format", "stream-json", "--output-format", "json"], "requires output-format"),
        (["--replay-user-messages", "--output-format", "stream-json"], "requires both"),
        (["--input-format", "lines"], "argument 'lines' is invalid"),
    ],
)
def test_the_protocols_options_are_checked_as_the_real_cli_does(
    fake_cli: FakeCli, flags: list[str], said: str
) -> None:
    fake_cli.write({"answer": "never", "repeat": True})
    done = subprocess.run(
        [FAKE_CLAUDE, "-p", "--verbose", *flags],
        input="",
        env=fake_cli.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1 and said in done.stderr
