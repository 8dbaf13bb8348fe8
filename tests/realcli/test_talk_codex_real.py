"""Talking to the real codex while it works (`codex app-server`, runners/runtimes/
codex_talk.py): the same answer as a one-shot run, a steer into the running turn,
approvals allowed and denied with a reason, an interrupt that keeps the session, and the
hand-over command a person runs in a terminal. Each against the scripted Responses
provider on 127.0.0.1; each kind of run's approval policy is in
test_talk_codex_modes_real.py."""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import select
import shlex
import signal
import struct
import termios
from pathlib import Path

import psutil

from runners.process import Outcome
from runners.runtimes import RUNTIMES, Decision, Delivered, Taken, Usage, run_model
from tests.pipeline.harness import git, make_repo
from tests.realcli.codex_talk_support import LIMITS, Bot, heard, talk, write_request
from tests.realcli.harness import child_env
from tests.realcli.openai_responses import Escalate
from tests.realcli.providers import Say, Seen, Shell

PER_RESPONSE = Usage(input_tokens=100, cached_input_tokens=20, output_tokens=10)


async def test_a_builder_run_through_the_protocol_gives_what_the_one_shot_run_gives(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    env = child_env(tmp_path / "home")
    turns = [Shell("echo built > built.txt"), Say("Built it.")]
    responses_model.script(*turns, *turns)
    request = write_request(responses_model, cli_bins, tmp_path, repo, "Build it.")
    one_shot = await run_model("codex", request, limits=LIMITS, base_env=env)
    assert one_shot.ok, one_shot.failure
    (repo / "built.txt").unlink()

    bot, steps = Bot(), []
    talked = await run_model(
        "codex",
        request,
        limits=LIMITS,
        base_env=env,
        conversation=bot.conversation,
        on_step=steps.append,
    )

    assert talked.ok, (talked.failure, talked.stderr_tail[-2000:])
    assert talked.output.answer == one_shot.output.answer == "Built it."
    assert talked.output.usage == one_shot.output.usage == Usage(200, 40, 20)
    assert talked.output.turns == one_shot.output.turns == 1
    assert not talked.output.interrupted
    # Its own session, the one it sent to the provider; a new one, not the one-shot's.
    assert talked.output.session_id not in (None, one_shot.output.session_id)
    assert {seen.session for seen in responses_model.seen[2:]} == {talked.output.session_id}
    # The model and effort reached the provider as with exec, and the sandbox let it write.
    for seen in responses_model.seen[2:]:
        assert seen.model == "gpt-5.5" and seen.body["reasoning"]["effort"] == "high"
    assert (repo / "built.txt").read_text() == "built\n"
    assert steps == ["ran: echo built > built.txt"]
    # Nothing inside the sandbox is asked, nothing was steered.
    assert bot.asked == [] and bot.told == []


async def test_a_steer_reaches_the_provider_in_the_running_turn(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    responses_model.script(Shell("sleep 2"), heard)
    bot = Bot()

    def on_step(step: str) -> None:
        if step == "ran: sleep 2":
            bot.conversation.steer("Use tabs, not spaces.", "steer-1")

    request = write_request(responses_model, cli_bins, tmp_path, repo, "Indent it.")
    result = await talk(request, bot.conversation, tmp_path / "home", on_step=on_step)

    assert result.ok, result.failure
    # The request after the command carries the command's result and the steer: one turn.
    second = responses_model.seen[1]
    assert second.user_texts == ["Indent it.", "Use tabs, not spaces."]
    assert "Process exited with code 0" in second.tool_results[-1]
    assert result.output.turns == 1 and len(responses_model.seen) == 2
    assert result.output.answer.startswith("heard: Indent it. | Use tabs, not spaces.")
    assert bot.told == [Delivered("steer-1"), Taken("steer-1")]


async def test_an_allowed_request_runs_and_its_output_reaches_the_provider(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    marker = tmp_path / "outside" / "made.txt"
    command = f"mkdir -p {marker.parent} && echo escalated-output | tee {marker}"
    responses_model.script(Escalate(command, "It writes outside the worktree."), heard)
    bot = Bot(lambda asked: Decision(True))

    request = write_request(responses_model, cli_bins, tmp_path, repo, "Write outside.")
    result = await talk(request, bot.conversation, tmp_path / "home")

    assert result.ok, result.failure
    [asked] = bot.asked
    assert (asked.tool, asked.command, asked.cwd) == ("command", command, str(repo))
    assert asked.reason == "It writes outside the worktree."
    assert marker.read_text() == "escalated-output\n"
    assert "escalated-output" in responses_model.seen[1].tool_results[-1]


async def test_a_denied_request_does_not_run_and_its_reason_reaches_the_provider(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    marker = tmp_path / "outside" / "made.txt"
    command = f"mkdir -p {marker.parent} && curl -sS https://example.org | tee {marker}"
    responses_model.script(Escalate(command, "It needs the network."), heard)
    bot = Bot(lambda asked: Decision(False, "no network please"))

    request = write_request(responses_model, cli_bins, tmp_path, repo, "Fetch it.")
    result = await talk(request, bot.conversation, tmp_path / "home")

    assert result.ok, result.failure
    assert [asked.command for asked in bot.asked] == [command]
    assert not marker.parent.exists()
    after = responses_model.seen[1]
    assert "rejected by user" in after.tool_results[-1]
    assert any("no network please" in text for text in after.user_texts), after.user_texts
    # The reason travels as a steer of the bot's own, not one the owner sent.
    assert bot.told == []


async def test_an_interrupt_ends_the_turn_kills_its_command_and_the_session_resumes(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    env = child_env(tmp_path / "home")
    # A 30 s sleep under a name of its own (a pid it read would be the sandbox's pid
    # namespace's) that says through a named pipe when it sleeps, so the test knows.
    fifo = tmp_path / "sleeping"
    os.mkfifo(fifo)
    name = f"sleeper-{tmp_path.name}"
    sleep = f"open('{fifo}', 'w').write('started\\n'); import time; time.sleep(30)"
    command = f'exec -a {name} python3 -c "{sleep}"'
    responses_model.script(Shell(command), Say("Going on."))
    bot = Bot()
    request = write_request(responses_model, cli_bins, tmp_path, repo, "Sleep first.")
    run = asyncio.ensure_future(
        run_model("codex", request, limits=LIMITS, base_env=env, conversation=bot.conversation)
    )
    assert await asyncio.wait_for(asyncio.to_thread(fifo.read_text), 60) == "started\n"
    [sleeper] = _named(name)
    bot.conversation.interrupt()
    result = await asyncio.wait_for(run, 20)

    assert result.outcome is Outcome.OK
    assert result.output.interrupted and result.failure is None
    session = result.output.session_id
    assert session
    # codex leaves the command running on an interrupt; the run's end took it down.
    assert not _alive(sleeper)

    resumed = await run_model(
        "codex",
        write_request(
            responses_model, cli_bins, tmp_path, repo, "Go on, please.", resume_session_id=session
        ),
        limits=LIMITS,
        base_env=env,
        conversation=Bot().conversation,
        previous_usage=result.output.thread_usage,
    )
    assert resumed.ok, resumed.failure
    assert resumed.output.answer == "Going on."
    assert resumed.output.session_id == session
    last = responses_model.seen[-1]
    assert last.user_texts == ["Sleep first.", "Go on, please."]
    assert last.session == session and last.body["reasoning"]["effort"] == "high"
    assert resumed.output.usage == PER_RESPONSE


async def test_the_hand_over_line_continues_the_session_in_a_terminal(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    env = child_env(tmp_path / "home")
    arrived = asyncio.Event()

    def by_hand(seen: Seen) -> Say:
        arrived.set()
        return Say("Continued by hand.")

    responses_model.script(Say("First part."), by_hand)
    request = write_request(responses_model, cli_bins, tmp_path, repo, "Start here.")
    first = await run_model(
        "codex", request, limits=LIMITS, base_env=env, conversation=Bot().conversation
    )
    assert first.ok, first.failure
    line = RUNTIMES["codex"].hand_over(request, first.output.session_id)
    # The key by the name of its file, never its value.
    assert responses_model.key not in line
    assert f'GATEWAY_API_KEY="$(cat {tmp_path}/secrets/codex-key)"' in line

    # The person has answered the TUI's questions of a first start before: this folder
    # is trusted, and gpt-5.5 stays although the pinned version offers a newer model (in
    # dialogs that drop keys typed too early, so a test cannot answer them in time).
    config = Path(env["HOME"]) / ".codex" / "config.toml"
    config.write_text(
        f'[projects."{repo}"]\ntrust_level = "trusted"\n'
        '[notice.model_migrations]\n"gpt-5.5" = "gpt-6-sol"\n'
    )
    terminal = await asyncio.to_thread(
        _start_in_a_pty, line + " " + shlex.quote("By hand now."), env
    )
    try:
        await asyncio.wait_for(_answer_terminal(terminal, arrived), 60)
    finally:
        os.killpg(terminal[0], signal.SIGKILL)
        os.waitpid(terminal[0], 0)
        os.close(terminal[1])
    seen = responses_model.seen[-1]
    assert seen.session == first.output.session_id
    assert seen.user_texts == ["Start here.", "By hand now."]
    assert "First part." in seen.assistant_texts
    assert git(repo, "status", "--porcelain") == ""


def _named(name: str) -> list[psutil.Process]:
    """The processes whose argv[0] is `name` (`exec -a`)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.cmdline()[:1] == [name]:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, IndexError):
            continue
    return found


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _start_in_a_pty(line: str, env: dict[str, str]) -> tuple[int, int]:
    """The line in bash in a terminal of its own (120x40), as a person would paste it."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session of its own, the pty its terminal
        os.execvpe("bash", ["bash", "-c", line], {**env, "TERM": "xterm-256color"})
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    return pid, fd


async def _answer_terminal(terminal: tuple[int, int], arrived: asyncio.Event) -> None:
    """Be the terminal until the provider heard the TUI: answer its cursor-position
    queries as a terminal does (it waits for them)."""
    _, fd = terminal
    loop = asyncio.get_running_loop()
    readable = asyncio.Event()
    loop.add_reader(fd, readable.set)
    try:
        while not arrived.is_set():
            waiter = asyncio.ensure_future(arrived.wait())
            ready = asyncio.ensure_future(readable.wait())
            await asyncio.wait({waiter, ready}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            ready.cancel()
            readable.clear()
            if arrived.is_set() or not select.select([fd], [], [], 0)[0]:
                continue
            try:
                said = os.read(fd, 65536)
            except OSError:
                return  # the terminal closed: the program ended
            for _ in range(said.count(b"\x1b[6n")):
                os.write(fd, b"\x1b[1;1R")
    finally:
        loop.remove_reader(fd)
