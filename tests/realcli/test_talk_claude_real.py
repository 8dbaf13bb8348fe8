"""Talking to the real Claude Code while it works (`claude -p --input-format stream-json`),
against the scripted Anthropic Messages provider: a builder's run through the protocol,
a steer reaching the running turn, approvals allowed and denied, an interrupt that kills
the running command and leaves a session to resume, and the hand-over line run in a
terminal. Latencies are printed (`-s`), never asserted."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import psutil

from runners.process import ProcessLimits
from runners.runtimes import (
    RUNTIMES,
    ApprovalAsked,
    Conversation,
    Decision,
    Delivered,
    Mode,
    Refused,
    RunResult,
    Taken,
    Told,
    Usage,
    run_model,
)
from runners.runtimes.claude_talk import INTERRUPTED
from tests.pipeline.harness import make_repo
from tests.realcli.clis import CLIS
from tests.realcli.harness import child_env, run_request, sessions
from tests.realcli.providers import Say, ScriptedModel, Seen, Shell, WriteFile

LIMITS = ProcessLimits(timeout=90, idle_timeout=60, kill_grace=1.0)
PER_RESPONSE = Usage(input_tokens=100, cached_input_tokens=20, output_tokens=10)


class Owner:
    """The bot's side of one conversation: what it was told, what it was asked, and
    the answers it gives (none given: every request is a test failure, denied)."""

    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalAsked] = []
        self.asked_at: list[float] = []
        self.told: list[Told] = []
        self.conversation = Conversation(self._decide, self.told.append)

    async def _decide(self, asked: ApprovalAsked) -> Decision:
        self.asked.append(asked)
        self.asked_at.append(time.monotonic())
        return self.answers.pop(0) if self.answers else Decision(False, "not expected")


async def talk(
    cli_bins, model: ScriptedModel, root: Path, cwd: Path, prompt: str, owner: Owner, **fields
) -> RunResult:
    fields.setdefault("mode", Mode.WORKSPACE_WRITE)
    on_step = fields.pop("on_step", None)
    on_spawn = fields.pop("on_spawn", None)
    request = run_request("claude", cli_bins, model, root, cwd, prompt, **fields)
    return await run_model(
        "claude",
        request,
        limits=LIMITS,
        base_env=child_env(root / "home"),
        conversation=owner.conversation,
        on_step=on_step,
        on_spawn=on_spawn,
    )


def received_at(times: list[float], answer: Say):
    """A model turn that notes when its request arrived."""

    def turn(seen: Seen) -> Say:
        times.append(time.monotonic())
        return answer

    return turn


async def test_a_builder_run_through_the_protocol_gives_what_a_one_shot_run_gives(
    cli_bins, messages_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    env = child_env(tmp_path / "home")
    messages_model.script(WriteFile("notes.txt", "one\n"), Say("Wrote the notes."))
    request = run_request(
        "claude",
        cli_bins,
        messages_model,
        tmp_path,
        repo,
        "Write notes.",
        mode=Mode.WORKSPACE_WRITE,
    )
    before = await run_model("claude", request, limits=LIMITS, base_env=env)
    assert before.ok, before.failure
    (repo / "notes.txt").unlink()

    messages_model.script(WriteFile("notes.txt", "one\n"), Say("Wrote the notes."))
    owner = Owner()
    result = await talk(cli_bins, messages_model, tmp_path, repo, "Write notes.", owner)

    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    assert not result.output.interrupted
    assert result.output.answer == before.output.answer == "Wrote the notes."
    assert result.output.usage == before.output.usage == Usage(200, 40, 20)
    assert result.output.turns == before.output.turns == 2
    assert result.output.cost_usd == before.output.cost_usd and result.output.cost_usd > 0
    assert result.output.model == before.output.model == messages_model.seen[-1].model
    assert (repo / "notes.txt").read_text() == "one\n"
    # Its own session, the one the CLI used on the wire.
    session = result.output.session_id
    assert session and session != before.output.session_id
    assert {seen.session for seen in messages_model.seen[2:]} == {session}
    assert messages_model.seen[2].prompt == "Write notes."
    # A write in the worktree is what a builder may do: nobody was asked.
    assert owner.asked == [] and owner.told == []


async def test_a_steer_reaches_the_running_turn_while_a_command_runs(
    cli_bins, messages_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    owner = Owner()
    steered: list[float] = []
    received: list[float] = []

    def on_step(step: str) -> None:
        if step == "Bash: sleep 2" and not steered:
            steered.append(time.monotonic())
            owner.conversation.steer("Use tabs, not spaces.", "steer-1")

    messages_model.script(Shell("sleep 2"), received_at(received, Say("Done, with tabs.")))
    result = await talk(
        cli_bins, messages_model, tmp_path, repo, "Indent the file.", owner, on_step=on_step
    )

    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    assert result.output.answer == "Done, with tabs."
    assert owner.told == [Delivered("steer-1"), Taken("steer-1")]
    # The same turn: the next request carries the command's result and the steer together.
    assert len(messages_model.seen) == 2
    last = messages_model.seen[1].body["messages"][-1]
    assert last["content"][0]["type"] == "tool_result"
    # In the result of the command (as a reminder) or beside it, as the CLI sees fit.
    assert "Use tabs, not spaces." in json.dumps(last)
    assert result.output.turns == 2
    print(f"\nsteer -> provider, a 2 s command running: {received[0] - steered[0]:.3f} s")


async def test_a_steer_during_the_last_answer_gets_a_turn_and_its_answer_counts(
    cli_bins, messages_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    owner = Owner()

    async def slow(seen: Seen) -> Say:
        # The model is still answering when the owner steers.
        owner.conversation.steer("Also add a changelog line.", "steer-2")
        await asyncio.sleep(1.0)
        return Say("First answer.")

    messages_model.script(slow, Say("Second answer, with the changelog."))
    result = await talk(cli_bins, messages_model, tmp_path, repo, "Do it.", owner)

    assert result.ok, result.failure
    assert owner.told == [Delivered("steer-2"), Taken("steer-2")]
    # Two results in one process: the answer is the last; usage and turns add up.
    assert result.output.answer == "Second answer, with the changelog."
    assert result.output.usage == Usage(200, 40, 20)
    assert result.output.turns == 2
    assert messages_model.seen[1].prompt == "Also add a changelog line."


async def test_an_approval_allowed_runs_the_command_and_the_model_sees_its_output(
    cli_bins, messages_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    command = "python3 -c \"open('allowed.txt', 'w').write('yes'); print(6 * 7)\""
    received: list[float] = []
    messages_model.script(Shell(command), received_at(received, Say("It printed 42.")))
    owner = Owner(Decision(True))
    result = await talk(cli_bins, messages_model, tmp_path, repo, "Compute.", owner)

    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    assert [(a.tool, a.command, a.cwd) for a in owner.asked] == [("Bash", command, str(repo))]
    assert owner.asked[0].reason  # the CLI's words for why it asks
    assert (repo / "allowed.txt").read_text() == "yes"
    assert _outputs(messages_model.seen[1]) == ["42"]
    assert result.output.answer == "It printed 42."
    print(f"\ndecided (allow) -> provider has the output: {received[0] - owner.asked_at[0]:.3f} s")


async def test_an_approval_denied_with_a_reason_does_not_run_and_the_model_reads_why(
    cli_bins, messages_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    command = "python3 -c \"open('denied.txt', 'w')\""
    messages_model.script(Shell(command), Say("Understood."))
    owner = Owner(Decision(False, "no network please"))
    result = await talk(cli_bins, messages_model, tmp_path, repo, "Fetch it.", owner)

    assert result.ok, result.failure
    assert [a.command for a in owner.asked] == [command]
    assert not (repo / "denied.txt").exists()
    assert _outputs(messages_model.seen[1]) == ["no network please"]


async def test_a_read_only_run_through_the_protocol_never_asks(
    cli_bins, messages_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    command = "python3 -c \"open('denied.txt', 'w')\""
    messages_model.script(Shell(command), Say("Could not."))
    owner = Owner(Decision(True))
    result = await talk(
        cli_bins, messages_model, tmp_path, repo, "Look.", owner, mode=Mode.READ_ONLY
    )
    assert result.ok, result.failure
    assert owner.asked == []
    assert not (repo / "denied.txt").exists()
    assert CLIS["claude"].refused_shell in messages_model.seen[1].tool_results[0]


async def test_the_turn_bound_still_ends_an_interactive_run(
    cli_bins, messages_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    messages_model.script(Shell("echo one"), Shell("echo two"), Say("never reached"))
    owner = Owner()
    result = await talk(cli_bins, messages_model, tmp_path, repo, "Work.", owner, max_turns=2)
    assert result.output.turn_limit_reached
    assert CLIS["claude"].turn_limit in (result.failure or "")
    assert len(messages_model.seen) == 2
    messages_model.turns.clear()


async def test_an_interrupt_kills_the_command_and_the_session_resumes(
    cli_bins, messages_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    # The command tells the test it runs through a named pipe, then sleeps long.
    fifo = repo / "started.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    started = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(reader, started.set)
    owner = Owner()
    groups: list[int] = []

    async def spawned(pgid: int) -> None:
        groups.append(pgid)

    async def interrupt_once_started() -> None:
        await started.wait()
        owner.conversation.steer("Never mind that.", "steer-late")
        owner.conversation.interrupt()

    messages_model.script(Shell("echo started > started.fifo; sleep 37"), Say("unused"))
    interrupter = asyncio.ensure_future(interrupt_once_started())
    try:
        result = await talk(
            cli_bins,
            messages_model,
            tmp_path,
            repo,
            "Start the long job.",
            owner,
            on_spawn=spawned,
        )
    finally:
        loop.remove_reader(reader)
        os.close(reader)
        interrupter.cancel()

    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    assert result.output.interrupted and result.output.failure is None
    session = result.output.session_id
    assert session
    # The steer sent before the interrupt was dropped with the turn, and said so.
    assert owner.told == [Delivered("steer-late"), Refused("steer-late", INTERRUPTED)]
    assert len(messages_model.seen) == 1
    messages_model.turns.clear()
    leftovers = [
        process
        for process in psutil.process_iter(["cmdline"])
        if process.info["cmdline"] == ["sleep", "37"]
    ]
    assert leftovers == []
    print(f"\ninterrupted run took {result.duration:.2f} s (the command sleeps 37 s)")

    messages_model.script(Say("Continuing where we stopped."))
    again = await talk(
        cli_bins,
        messages_model,
        tmp_path,
        repo,
        "Go on, shorter.",
        Owner(),
        resume_session_id=session,
    )
    assert again.ok, again.failure
    assert again.output.session_id == session
    assert "Start the long job." in messages_model.seen[-1].user_texts
    assert "Go on, shorter." in messages_model.seen[-1].user_texts
    assert sessions("claude", messages_model, tmp_path) == {session}


async def test_the_hand_over_line_continues_the_session_in_a_terminal(
    cli_bins, messages_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    messages_model.script(Say("Noted."))
    owner = Owner()
    request = run_request(
        "claude",
        cli_bins,
        messages_model,
        tmp_path,
        repo,
        "Remember the word pelican.",
        mode=Mode.WORKSPACE_WRITE,
    )
    env = child_env(tmp_path / "home")
    result = await run_model(
        "claude", request, limits=LIMITS, base_env=env, conversation=owner.conversation
    )
    assert result.ok, result.failure
    session = result.output.session_id
    line = RUNTIMES["claude"].hand_over(request, session)
    assert CLIS["claude"].key not in line  # the key file is named, not its content

    # What a person who has used Claude Code in this folder with this key once has
    # answered already (its first-run dialogs are the person's, not the line's).
    person = Path(env["HOME"]) / ".claude.json"
    settings = json.loads(person.read_text())
    settings["hasCompletedOnboarding"] = True
    settings.setdefault("projects", {})[str(repo)] = {"hasTrustDialogAccepted": True}
    settings["customApiKeyResponses"] = {"approved": [CLIS["claude"].key[-20:]], "rejected": []}
    person.write_text(json.dumps(settings))

    arrived = asyncio.Event()

    def remembered(seen: Seen) -> Say:
        arrived.set()
        return Say("The word was pelican.")

    messages_model.script(remembered)
    main, terminal = os.openpty()
    shell = subprocess.Popen(
        ["bash", "-c", f"{line} {shlex.quote('What was the word?')}"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env={**env, "TERM": "xterm-256color"},
        start_new_session=True,
    )
    os.close(terminal)
    screen = bytearray()
    loop = asyncio.get_running_loop()
    loop.add_reader(main, lambda: screen.extend(_read(main)))
    try:
        await asyncio.wait_for(arrived.wait(), 60)
    finally:
        loop.remove_reader(main)
        os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()
        os.close(main)
    seen = messages_model.seen[-1]
    assert seen.session == session
    assert "Remember the word pelican." in seen.user_texts
    assert "Noted." in seen.assistant_texts
    assert "What was the word?" in seen.user_texts


def _outputs(seen: Seen) -> list[str]:
    """The tools' results without the reminders the CLI appends to them."""
    return [result.split("\n\n<system-reminder>")[0] for result in seen.tool_results]


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:
        return b""
