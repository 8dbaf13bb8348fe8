"""The runner layer against each real agent CLI (tests/realcli/clis/), each talking to a
scripted model on 127.0.0.1 through the `base_url` option: answers, usage, cost and
session ids from the real output, resume, the read-only sandboxes, turn bounds, and
timeouts that leave no process behind. The tests named for one CLI show that CLI's own
behaviour."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from runners.process import Outcome, ProcessLimits, run_process
from runners.runtimes import RUNTIMES, Mode, Usage, build_invocation, claude, run_model
from tests.pipeline.harness import git, make_repo
from tests.pipeline.support import tree_snapshot
from tests.realcli.clis import CLIS
from tests.realcli.harness import child_env, run_request, sessions
from tests.realcli.providers import Hang, Say, Shell, WriteFile

LIMITS = ProcessLimits(timeout=60, idle_timeout=60, kill_grace=1.0)
PER_RESPONSE = Usage(input_tokens=100, cached_input_tokens=20, output_tokens=10)


async def test_answer_usage_cost_and_session_come_from_the_real_output(
    cli, cli_bins, model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    model.script(Say("Hello from the loopback model."))
    request = run_request(cli, cli_bins, model, tmp_path, repo, "Say hello.")
    result = await run_model(cli, request, limits=LIMITS, base_env=child_env(tmp_path / "home"))

    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    assert result.output.answer == "Hello from the loopback model."
    seen = model.seen[0]
    assert seen.prompt == "Say hello."
    assert seen.cwd == str(repo)
    # The session id the bot records is the one the CLI used.
    assert result.output.session_id
    assert sessions(cli, model, tmp_path) == {result.output.session_id}
    assert result.output.usage == PER_RESPONSE
    assert result.output.turns == 1
    # A CLI reporting the session's usage cumulatively (codex) gives that reading too.
    assert result.output.thread_usage in (None, PER_RESPONSE)
    if RUNTIMES[cli].reports_cost:
        assert result.output.cost_usd is not None and result.output.cost_usd > 0
    else:
        assert result.output.cost_usd is None  # tokens only: priced by the configuration
    if CLIS[cli].reports_model:
        assert result.output.model == seen.model  # named by the CLI's own output


async def test_resume_continues_the_real_session(cli, cli_bins, model, tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {})
    env = child_env(tmp_path / "home")
    model.script(Say("First part done."), Say("Second part done."))
    first = await run_model(
        cli,
        run_request(cli, cli_bins, model, tmp_path, repo, "Start.", mode=Mode.WORKSPACE_WRITE),
        limits=LIMITS,
        base_env=env,
    )
    assert first.ok, first.failure
    session = first.output.session_id
    second = await run_model(
        cli,
        run_request(
            cli,
            cli_bins,
            model,
            tmp_path,
            repo,
            "Go on.",
            mode=Mode.WORKSPACE_WRITE,
            resume_session_id=session,
        ),
        limits=LIMITS,
        base_env=env,
        previous_usage=first.output.thread_usage,
    )
    assert second.ok, second.failure
    assert second.output.answer == "Second part done."
    assert second.output.session_id == session
    assert sessions(cli, model, tmp_path) == {session}
    # The resumed conversation carries the first run's exchange.
    assert "Start." in model.seen[1].user_texts
    assert "First part done." in model.seen[1].assistant_texts
    # The run's own share (codex reports the thread's usage cumulatively: the difference).
    assert second.output.usage == PER_RESPONSE


async def test_resume_of_an_unknown_session_fails_with_the_clis_reason(
    cli, cli_bins, model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    env = child_env(tmp_path / "home")
    # A session of its own first: the unknown one is not the only one it could look for.
    model.script(Say("A first session."))
    first = run_request(cli, cli_bins, model, tmp_path, repo, "Start.")
    assert (await run_model(cli, first, limits=LIMITS, base_env=env)).ok
    unknown = "01a22fc5-0000-7000-8000-000000000000"
    request = run_request(cli, cli_bins, model, tmp_path, repo, "Go on.", resume_session_id=unknown)
    result = await run_model(cli, request, limits=LIMITS, base_env=env)
    assert result.outcome is Outcome.EXIT_NONZERO
    assert CLIS[cli].unknown_session in (result.failure or "")
    assert unknown in (result.failure or "")
    assert len(model.seen) == 1


async def test_a_read_only_run_cannot_write_to_the_repository(
    cli, cli_bins, model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {"report": "# Report\n"})
    before = tree_snapshot(repo)
    model.script(
        WriteFile("written-by-a-reader.txt", "should not exist\n"),
        Shell("touch touched-by-a-reader.txt"),
        Say("I tried."),
    )
    request = run_request(cli, cli_bins, model, tmp_path, repo, "Look only.")
    result = await run_model(cli, request, limits=LIMITS, base_env=child_env(tmp_path / "home"))

    assert result.ok, result.failure
    assert tree_snapshot(repo) == before
    assert git(repo, "status", "--porcelain") == ""
    refusals = model.seen[-1].tool_results
    assert len(refusals) == 2
    # A sandbox that lets the kernel refuse the writes (codex), or write tools not offered
    # and commands that write denied (the others).
    assert not CLIS[cli].write_tools & model.seen[0].tools
    assert CLIS[cli].refused_write in refusals[0], refusals
    assert CLIS[cli].refused_shell in refusals[1], refusals


async def test_a_timeout_kills_the_real_cli_and_every_helper(
    cli, cli_bins, model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    model.script(Hang())
    request = run_request(cli, cli_bins, model, tmp_path, repo, "Think forever.")
    groups: list[int] = []

    async def spawned(pgid: int) -> None:
        groups.append(pgid)

    run = asyncio.ensure_future(
        run_model(
            cli,
            request,
            # Longer than the CLI's own start on a loaded box (gemini took over 4 s to
            # its first request in a fresh-clone run under stress), so that the limit
            # cuts a hanging request, not the start.
            limits=ProcessLimits(timeout=10, idle_timeout=None, kill_grace=1.0),
            base_env=child_env(tmp_path / "home"),
            on_spawn=spawned,
        )
    )
    hanging = asyncio.ensure_future(model.hanging.wait())
    await asyncio.wait({run, hanging}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    if not hanging.done():
        hanging.cancel()
        ended = run.result().failure if run.done() else "still running after 30 s"
        raise AssertionError(f"the CLI never reached the model: {ended}")
    leader = psutil.Process(groups[0])
    tree = [leader, *leader.children(recursive=True)]
    key = CLIS[cli].key
    # The key is in the CLI's environment, never on a command line.
    assert key in leader.environ().values()
    assert not any(key in " ".join(_cmdline(process)) for process in tree)

    result = await asyncio.wait_for(run, 30)
    assert result.outcome is Outcome.TIMEOUT, result.failure
    assert "timed out" in (result.failure or "")
    gone, alive = psutil.wait_procs(tree, timeout=3)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], alive
    members = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == groups[0]:
                members.append(process.pid)
        except (ProcessLookupError, psutil.NoSuchProcess):
            continue
    assert members == []
    assert len(tree) >= CLIS[cli].processes


def _cmdline(process: psutil.Process) -> list[str]:
    # A short-lived helper (a `git` the CLI ran) may be gone by now.
    try:
        return process.cmdline()
    except psutil.NoSuchProcess:
        return []


def _is_git(path: str) -> bool:
    done = subprocess.run(["git", "-C", path, "rev-parse"], capture_output=True)
    return done.returncode == 0


async def test_runs_in_an_empty_folder_that_is_no_git_repository(
    cli, cli_bins, model, tmp_path: Path
) -> None:
    # The intake planner's world: codex used to refuse it ("Not inside a trusted directory").
    empty = tmp_path / "draft-empty"
    empty.mkdir()
    model.script(Say("A question for the owner."))
    request = run_request(cli, cli_bins, model, tmp_path, empty, "Draft this.")
    result = await run_model(cli, request, limits=LIMITS, base_env=child_env(tmp_path / "home"))
    assert result.ok, result.failure
    assert result.output.answer == "A question for the owner."
    assert model.seen[0].cwd == str(empty) and not _is_git(str(empty))


async def test_codex_refuses_a_non_git_folder_without_the_skip_flag(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    """The cause of the /draft failure, shown on the real codex (so the flag is needed)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    request = run_request("codex", cli_bins, responses_model, tmp_path, empty, "Draft this.")
    argv = [
        arg for arg in build_invocation("codex", request).argv if arg != "--skip-git-repo-check"
    ]
    env = {**child_env(tmp_path / "home"), "GATEWAY_API_KEY": responses_model.key}
    result = await run_process(argv, cwd=empty, stdin="Draft this.", base_env=env, limits=LIMITS)
    assert result.exit_code == 1
    assert "Not inside a trusted directory" in result.stderr_tail
    assert responses_model.seen == []


async def test_claude_write_tools_are_the_real_tool_names(
    cli_bins, messages_model, tmp_path: Path
) -> None:
    """The read-only disallow list names only tools the pinned Claude Code has: no
    "Permission deny rule ... matches no known tool" in its log (as MultiEdit caused)."""
    repo = make_repo(tmp_path, {})
    env = {**child_env(tmp_path / "home"), "ANTHROPIC_API_KEY": messages_model.key}
    env["ANTHROPIC_BASE_URL"] = messages_model.base_url
    messages_model.script(Say("ok"), Say("ok"), Say("ok"))

    async def debug_log(argv: list[str], name: str) -> str:
        log = tmp_path / f"{name}.log"
        argv = [*argv, "--debug-file", str(log)]
        result = await run_process(argv, cwd=repo, stdin="Hi.", base_env=env, limits=LIMITS)
        assert result.exit_code == 0, result.stderr_tail
        return log.read_text()

    request = run_request("claude", cli_bins, messages_model, tmp_path, repo, "Hi.")
    read_only = list(build_invocation("claude", request).argv)
    assert "--disallowedTools" in read_only
    assert "matches no known tool" not in await debug_log(read_only, "read-only")
    # The check itself can fail: an unknown name is reported by the real CLI.
    legacy = [*read_only]
    legacy[legacy.index("--disallowedTools") + 1] += ",MultiEdit"
    assert 'deny rule "MultiEdit" matches no known tool' in await debug_log(legacy, "legacy")
    # And every name on the list is a tool a writing run is offered.
    writer = run_request(
        "claude", cli_bins, messages_model, tmp_path, repo, "Hi.", mode=Mode.WORKSPACE_WRITE
    )
    stream = [*build_invocation("claude", writer).argv, "--verbose"]
    stream[stream.index("--output-format") + 1] = "stream-json"
    result = await run_process(stream, cwd=repo, stdin="Hi.", base_env=env, limits=LIMITS)
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    init = next(line for line in lines if line.get("subtype") == "init")
    assert set(claude.WRITE_TOOLS) <= set(init["tools"]), init["tools"]


@pytest.mark.parametrize("cli", [name for name in CLIS if RUNTIMES[name].bounds_turns])
async def test_the_turn_bound_is_reported_as_such(cli, cli_bins, model, tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {})
    model.script(Shell("git status"), Shell("git status"))
    request = run_request(
        cli, cli_bins, model, tmp_path, repo, "Build it.", mode=Mode.WORKSPACE_WRITE, max_turns=1
    )
    result = await run_model(cli, request, limits=LIMITS, base_env=child_env(tmp_path / "home"))
    # The real CLI stops after one model turn and says why: the builder escalates.
    assert result.outcome is Outcome.EXIT_NONZERO
    assert result.output.turn_limit_reached
    assert CLIS[cli].turn_limit in (result.failure or "")
    assert len(model.seen) == 1 and model.pending == 1
    assert result.output.session_id in sessions(cli, model, tmp_path)


async def test_openrouter_runtime_reaches_its_base_url_with_its_key(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    responses_model.script(Say("via the openrouter runtime"))
    request = run_request("codex", cli_bins, responses_model, tmp_path, repo, "Hi.")
    request = replace(request, model="vendor/some-model")
    result = await run_model(
        "openrouter", request, limits=LIMITS, base_env=child_env(tmp_path / "home")
    )
    assert result.ok, result.failure
    assert result.output.answer == "via the openrouter runtime"
    assert responses_model.seen[0].model == "vendor/some-model"
    assert responses_model.seen[0].headers["Authorization"] == f"Bearer {responses_model.key}"


async def test_the_steps_of_a_run_are_read_from_the_real_clis_stream(
    cli, cli_bins, model, tmp_path: Path
) -> None:
    # What a status message shows while an agent works: each command it runs and
    # each file it changes, read from the CLI's own event stream as it goes.
    repo = make_repo(tmp_path, {})
    model.script(Shell("git log --oneline"), WriteFile("notes.txt", "hi\n"), Say("Done with both."))
    steps: list[str] = []
    request = run_request(
        cli, cli_bins, model, tmp_path, repo, "Look, then write.", mode=Mode.WORKSPACE_WRITE
    )
    result = await run_model(
        cli, request, limits=LIMITS, base_env=child_env(tmp_path / "home"), on_step=steps.append
    )
    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    assert result.output.answer == "Done with both."  # the final parse is unchanged
    assert any("git log --oneline" in step for step in steps), steps
    assert any("notes.txt" in step for step in steps), steps
