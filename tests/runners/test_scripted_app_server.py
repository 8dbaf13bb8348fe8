"""The scripted `codex app-server` (runners/scripted/codex_app_server.py) speaks what the
bot uses of the real one: the same driver and parser run it (runners/runtimes/codex_talk.py)
as they run the real CLI in tests/realcli/test_talk_codex_real.py; and what it prints
has the shapes of the transcripts captured from the real one."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from runners.runtimes import (
    ApprovalAsked,
    Conversation,
    Decision,
    Delivered,
    Mode,
    Refused,
    RunRequest,
    Taken,
    Told,
    Usage,
    codex,
    codex_talk,
    run_model,
)
from tests.runners.conftest import FAKE_CODEX, FAST, FakeCli

DATA = Path(__file__).parent / "data" / "codex_app_server"


def talk(fake: FakeCli, workdir: Path, prompt: str = "Build it.", **fields: Any) -> RunRequest:
    return RunRequest(
        binary=FAKE_CODEX, cwd=workdir, prompt=prompt, mode=Mode.WORKSPACE_WRITE, **fields
    )


class Bot:
    def __init__(self) -> None:
        self.told: list[Told] = []
        self.asked: list[ApprovalAsked] = []
        self.conversation = Conversation(self.decide, self.told.append)

    async def decide(self, asked: ApprovalAsked) -> Decision:
        self.asked.append(asked)
        return Decision(False)


async def run(fake: FakeCli, request: RunRequest, bot: Bot, **options: Any):
    return await run_model(
        "codex", request, limits=FAST, base_env=fake.env, conversation=bot.conversation, **options
    )


async def test_a_turn_is_answered_from_its_scenario(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write(
        {
            "match": "Build it.",
            "answer": "Built.",
            "files": {"src/app.py": "print('hi')\n"},
            "steps": [{"command": "pytest -q"}],
            "usage": {"input_tokens": 50, "cached_input_tokens": 5, "output_tokens": 7},
        }
    )
    bot, steps = Bot(), []
    result = await run(
        fake_cli, talk(fake_cli, workdir, model="gpt-5.5"), bot, on_step=steps.append
    )
    assert result.ok, (result.failure, result.stderr_tail)
    assert result.output.answer == "Built." and result.output.turns == 1
    assert result.output.usage == Usage(50, 5, 7) and result.output.model == "gpt-5.5"
    assert (workdir / "src" / "app.py").exists()
    assert steps == ["ran: pytest -q", f"changed: {workdir / 'src' / 'app.py'}"]
    [call] = fake_cli.calls()
    assert call["stdin"] == "Build it." and call["session"] == result.output.session_id
    assert call["argv"][-1] == "app-server" and call["config"]["model"] == "gpt-5.5"
    assert bot.told == [] and bot.asked == []


async def test_a_steer_is_taken_at_the_next_step(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write(
        {
            "answer": "Done.",
            "steps": [{"command": "make"}, {"command": "make test"}],
            "step_delay": 0.3,
        }
    )
    bot = Bot()

    def on_step(step: str) -> None:
        if step == "ran: make":
            bot.conversation.steer("Skip the slow tests.", "s1")

    result = await run(fake_cli, talk(fake_cli, workdir), bot, on_step=on_step)
    assert result.ok and bot.told == [Delivered("s1"), Taken("s1")]


def test_a_steer_with_no_turn_running_gets_codexs_error(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"answer": "never"})
    steer = {"threadId": "t", "expectedTurnId": "t", "input": [{"type": "text", "text": "x"}]}
    done = subprocess.run(
        [FAKE_CODEX, "app-server"],
        input=_lines({"id": "steer-1", "method": "turn/steer", "params": steer}),
        env=fake_cli.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    error = {"code": -32600, "message": "no active turn to steer"}
    assert json.loads(done.stdout) == {"id": "steer-1", "error": error}


async def test_an_interrupt_ends_the_turn_and_the_session_resumes(
    fake_cli: FakeCli, workdir: Path
) -> None:
    fake_cli.write(
        {"answer": "never said", "steps": [{"command": "sleep 30"}], "step_delay": 30},
        {"match": "Go on.", "answer": "Going on."},
    )
    bot = Bot()
    bot.conversation.interrupt()
    first = await run(fake_cli, talk(fake_cli, workdir), bot)
    assert first.ok and first.output.interrupted and first.output.answer == ""
    session = first.output.session_id
    again = await run(
        fake_cli,
        talk(fake_cli, workdir, prompt="Go on.", resume_session_id=session),
        Bot(),
        previous_usage=first.output.thread_usage,
    )
    assert again.ok and again.output.answer == "Going on." and again.output.session_id == session
    assert again.output.usage == Usage(100, 20, 10)


async def test_a_scenarios_exit_status_ends_it_mid_turn(fake_cli: FakeCli, workdir: Path) -> None:
    fake_cli.write({"answer": "half an answer", "exit_code": 1, "stderr": "agent crashed"})
    result = await run(fake_cli, talk(fake_cli, workdir), Bot())
    assert result.failure is not None and not result.output.interrupted
    assert "agent crashed" in result.stderr_tail


async def test_an_unknown_session_is_refused_as_the_real_one_does(
    fake_cli: FakeCli, workdir: Path
) -> None:
    fake_cli.write({"answer": "never"})
    unknown = "01a22fc5-0000-7000-8000-000000000000"
    bot = Bot()
    bot.conversation.steer("Early.", "s1")
    result = await run(fake_cli, talk(fake_cli, workdir, resume_session_id=unknown), bot)
    assert result.failure == f"codex refused the thread: no rollout found for thread id {unknown}"
    assert bot.told == [Refused("s1", codex_talk.FINISHED)]


async def test_a_missing_key_fails_the_turn(
    fake_cli: FakeCli, workdir: Path, tmp_path: Path
) -> None:
    fake_cli.write({"answer": "never"})
    key = tmp_path / "key"
    key.write_text("k\n")
    request = talk(fake_cli, workdir, base_url="http://gw:8080/v1", api_key_file=key)
    argv = list(codex.build_talk_argv(request).argv)
    done = subprocess.run(
        argv,
        input=_lines(
            {"id": "initialize", "method": "initialize", "params": {}},
            {"id": "thread", "method": "thread/start", "params": {"cwd": str(workdir)}},
        )
        + _turn_start(),
        env=fake_cli.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    out = codex_talk.wire.parse_output(done.stdout)
    assert out.failure == "codex turn failed: Missing environment variable: `GATEWAY_API_KEY`."


def _lines(*messages: dict[str, Any]) -> str:
    return "".join(json.dumps(message) + "\n" for message in messages)


def _turn_start() -> str:
    # The thread id is the stand-in's to choose; it takes the turn for its open thread.
    return _lines({"id": "turn", "method": "turn/start", "params": {"input": []}})


@pytest.mark.parametrize("argv", [["app-server", "--bogus"], ["app-server", "extra"]])
def test_app_server_command_lines_are_held_to_the_real_ones(
    fake_cli: FakeCli, argv: list[str]
) -> None:
    fake_cli.write({"answer": "never"})
    done = subprocess.run(
        [FAKE_CODEX, *argv], input="", env=fake_cli.env, capture_output=True, text=True
    )
    assert done.returncode == 2 and "unexpected argument" in done.stderr


def test_it_prints_the_shapes_codex_prints(fake_cli: FakeCli, workdir: Path) -> None:
    """Each kind of line the stand-in prints carries (at least) the fields the real one's
    line of that kind carries where the bot reads them (the captured transcripts)."""
    fake_cli.write({"answer": "Built.", "steps": [{"command": "make"}]})
    done = subprocess.run(
        [FAKE_CODEX, "app-server"],
        input=_lines(
            {"id": "initialize", "method": "initialize", "params": {}},
            {"method": "initialized"},
            {"id": "thread", "method": "thread/start", "params": {"cwd": str(workdir)}},
        )
        + _turn_start(),
        env=fake_cli.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    ours = _shapes(json.loads(line) for line in done.stdout.splitlines())
    real = _shapes(
        json.loads(line)["message"]
        for name in ("plain", "steer")
        for line in (DATA / f"{name}.jsonl").read_text().splitlines()
        if json.loads(line)["from"] == "codex"
    )
    for kind, fields in ours.items():
        assert kind in real, kind
        assert fields <= real[kind], (kind, fields - real[kind])


def _shapes(messages) -> dict[str, set[str]]:
    """Per kind of line (method, item type or answered id) the paths of its fields."""
    shapes: dict[str, set[str]] = {}
    for message in messages:
        item = message.get("params", {}).get("item", {})
        kind = message.get("method") or f"answer:{message.get('id')}"
        kind += f":{item['type']}" if "type" in item else ""
        shapes.setdefault(kind, set()).update(_paths(message))
    return shapes


def _paths(value: Any, prefix: str = "") -> set[str]:
    if not isinstance(value, dict):
        return {prefix}
    found: set[str] = set()
    for key, inner in value.items():
        found |= _paths(inner, f"{prefix}.{key}")
    return found
