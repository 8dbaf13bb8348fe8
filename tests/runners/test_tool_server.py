"""The run's tool server as each CLI is told of it (runners/tool_server.py,
runners/runtimes/tool_config.py), the pump (runners/mcp_bridge.py) over a real socket,
and the idle watchdog held while a tool waits for a person (runners.pipe.OwnerWait)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from runners.pipe import OwnerWait
from runners.process import Outcome, ProcessLimits, run_process
from runners.runtimes import InvalidRequest, Mode, RunRequest, get_runtime
from runners.runtimes.tool_config import GEMINI_SOCKET_ENV
from runners.tool_server import ToolServer, make_folder, remove_folder

TOOLS = ("ask_owner", "card_context", "propose_card")


@pytest.fixture
def server():
    folder = make_folder()
    yield ToolServer(folder=folder, tools=TOOLS, timeout_s=960)
    remove_folder(folder)


def request(tmp_path: Path, tools: ToolServer, binary: str) -> RunRequest:
    return RunRequest(
        binary=binary,
        cwd=tmp_path,
        prompt="build it",
        mode=Mode.WORKSPACE_WRITE,
        home=tmp_path / "home",
        tools=tools,
    )


def test_the_folder_is_the_bots_alone_and_holds_the_pump(server):
    assert stat.S_IMODE(os.stat(server.folder).st_mode) == 0o700
    assert server.bridge.read_text(encoding="utf-8").startswith('"""Runs where the agent CLI')
    assert server.argv() == [
        os.path.realpath(sys.executable),
        "-I",
        "-S",
        str(server.bridge),
        str(server.socket),
    ]


def test_codex_gets_the_server_with_a_call_timeout_longer_than_the_wait(tmp_path, server):
    record = get_runtime("codex")
    for argv in (
        record.build_argv(request(tmp_path, server, "codex")).argv,
        record.talking.build_argv(request(tmp_path, server, "codex")).argv,
    ):
        pairs = [argv[i + 1] for i, word in enumerate(argv) if word == "-c"]
        assert f"mcp_servers.board.command={json.dumps(server.command())}" in pairs
        assert f"mcp_servers.board.args={json.dumps(server.args())}" in pairs
        assert "mcp_servers.board.tool_timeout_sec=960" in pairs
        # Else: "MCP tool call requires approval, but approval policy is never".
        assert 'mcp_servers.board.default_tools_approval_mode="approve"' in pairs
        # Root options: before the subcommand.
        assert max(i for i, w in enumerate(argv) if w == "-c") < argv.index(
            "exec" if "exec" in argv else "app-server"
        )


def test_openrouter_runs_codex_with_the_same_server(tmp_path, server):
    from dataclasses import replace

    record = get_runtime("openrouter")
    base = replace(
        request(tmp_path, server, "codex"), model="vendor/model", api_key_file=tmp_path / "k"
    )
    for argv in (record.build_argv(base).argv, record.talking.build_argv(base).argv):
        pairs = [argv[i + 1] for i, word in enumerate(argv) if word == "-c"]
        assert f"mcp_servers.board.args={json.dumps(server.args())}" in pairs


def test_claude_gets_only_this_server_and_its_tools_granted(tmp_path, server):
    record = get_runtime("claude")
    for invocation in (
        record.build_argv(request(tmp_path, server, "claude")),
        record.talking.build_argv(request(tmp_path, server, "claude")),
    ):
        argv = list(invocation.argv)
        config = json.loads(argv[argv.index("--mcp-config") + 1])
        assert config == {
            "mcpServers": {"board": {"command": server.command(), "args": server.args()}}
        }
        assert "--strict-mcp-config" in argv
        allowed = argv[argv.index("--allowedTools") + 1].split(" ")
        assert allowed == [f"mcp__board__{name}" for name in TOOLS]
        assert invocation.env_extras["MCP_TOOL_TIMEOUT"] == "960000"
        # Else the tools hide behind its ToolSearch (measured on the pinned version).
        assert invocation.env_extras["ENABLE_TOOL_SEARCH"] == "false"


def test_gemini_gets_the_server_in_its_homes_settings_and_the_socket_in_its_env(tmp_path, server):
    invocation = get_runtime("gemini").build_argv(request(tmp_path, server, "gemini"))
    assert invocation.env_extras[GEMINI_SOCKET_ENV] == str(server.socket)
    [settings] = [
        json.loads(text) for path, text in invocation.files.items() if "settings" in path.name
    ]
    board = settings["mcpServers"]["board"]
    assert board["command"] == server.command() and board["trust"] is True
    assert board["args"][:3] == ["-I", "-S", "-c"]
    assert board["args"][4] == "${INTENT_BOARD_TOOLS_SOCKET:-}"
    # Longer than the longest wait the configuration allows (7 days).
    assert board["timeout"] > 7 * 24 * 3600 * 1000
    # Every run of the home writes the same text: runs beside each other do not fight.
    plain = RunRequest(binary="gemini", cwd=tmp_path, prompt="p", home=tmp_path / "home")
    assert get_runtime("gemini").build_argv(plain).files == invocation.files


def test_a_run_without_tools_is_told_of_none(tmp_path):
    for name in ("codex", "claude", "gemini"):
        plain = RunRequest(binary=name, cwd=tmp_path, prompt="p", home=tmp_path)
        invocation = get_runtime(name).build_argv(plain)
        assert not any("mcp" in word.lower() for word in invocation.argv)
        assert GEMINI_SOCKET_ENV not in invocation.env_extras


@pytest.mark.parametrize(
    ("folder", "tools", "timeout"),
    [
        ("relative/folder", TOOLS, 60),
        ('/tmp/x"y', TOOLS, 60),
        ("/tmp/" + "x" * 120, TOOLS, 60),
        ("/tmp/ok", ("ask owner",), 60),
        ("/tmp/ok", (), 60),
        ("/tmp/ok", TOOLS, 0),
    ],
)
def test_what_must_not_reach_a_configuration_is_refused(tmp_path, folder, tools, timeout):
    bad = ToolServer(folder=Path(folder), tools=tools, timeout_s=timeout)
    with pytest.raises(InvalidRequest):
        get_runtime("codex").build_argv(request(tmp_path, bad, "codex"))


@pytest.mark.asyncio
async def test_the_pump_joins_the_clis_stdio_to_the_socket(server):
    got: list[bytes] = []

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = await reader.readline()
        got.append(line)
        writer.write(b"answer to " + line)
        await writer.drain()
        writer.close()

    listener = await asyncio.start_unix_server(echo, path=str(server.socket))
    async with listener:
        process = await asyncio.create_subprocess_exec(
            *server.argv(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env={},
        )
        out, _ = await asyncio.wait_for(process.communicate(b'{"jsonrpc":"2.0"}\n'), 10)
    assert got == [b'{"jsonrpc":"2.0"}\n']
    # The bot closing its end ends the pump: the CLI sees its server gone.
    assert out == b'answer to {"jsonrpc":"2.0"}\n' and process.returncode == 0


@pytest.mark.asyncio
async def test_the_pump_says_why_when_the_run_is_over(tmp_path):
    gone = ToolServer(folder=make_folder(), tools=TOOLS, timeout_s=60)
    remove_folder(gone.folder)
    gone.folder.mkdir()
    (gone.bridge).write_text(
        Path(__file__).parents[2].joinpath("runners/mcp_bridge.py").read_text(), encoding="utf-8"
    )
    process = await asyncio.create_subprocess_exec(
        *gone.argv(), stdin=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    _, err = await asyncio.wait_for(process.communicate(b""), 10)
    remove_folder(gone.folder)
    assert process.returncode == 1 and b"the board's tools are not reachable" in err


@pytest.mark.asyncio
async def test_the_idle_watchdog_waits_while_a_person_is_asked(tmp_path):
    limits = ProcessLimits(timeout=30, idle_timeout=0.6, kill_grace=0.2)
    silent = [sys.executable, "-c", "import time; time.sleep(1.5); print('done')"]
    unheld = await run_process(silent, cwd=tmp_path, limits=limits)
    assert unheld.outcome is Outcome.IDLE_TIMEOUT

    # Asked for the whole run, as the time limit's test below: a question that ended
    # at a fixed time left the child's own start (over half a second under load) to
    # count as silence after it.
    hold = OwnerWait()
    answered = asyncio.Event()
    asked = asyncio.Event()

    async def ask() -> None:
        with hold.waiting():
            asked.set()
            await answered.wait()

    asking = asyncio.create_task(ask())
    await asked.wait()
    held = await run_process(silent, cwd=tmp_path, limits=limits, hold=hold)
    answered.set()
    await asking
    assert held.outcome is Outcome.OK and held.stdout == "done\n"


@pytest.mark.asyncio
async def test_the_time_limit_does_not_count_while_a_person_is_asked(tmp_path):
    limits = ProcessLimits(timeout=0.6, kill_grace=0.2)
    slow = [sys.executable, "-c", "import time; time.sleep(1.5); print('done')"]
    unheld = await run_process(slow, cwd=tmp_path, limits=limits)
    assert unheld.outcome is Outcome.TIMEOUT

    hold = OwnerWait()
    answered = asyncio.Event()
    asked = asyncio.Event()

    async def ask() -> None:
        with hold.waiting():
            asked.set()
            await answered.wait()

    asking = asyncio.create_task(ask())
    await asked.wait()
    held = await run_process(slow, cwd=tmp_path, limits=limits, hold=hold)
    answered.set()
    await asking
    assert held.outcome is Outcome.OK and held.stdout == "done\n"
    assert hold.held(asyncio.get_running_loop().time()) >= 1.5


def test_a_long_tmpdir_does_not_make_the_socket_unbindable(tmp_path, monkeypatch):
    import tempfile

    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    folder = make_folder()
    try:
        server = ToolServer(folder=folder, tools=TOOLS, timeout_s=60)
        server.validate()
        assert str(folder).startswith("/tmp/ib-tools-")
    finally:
        remove_folder(folder)
